// Command chart renders the plain manifests of deploy/ from regatta's Helm
// chart, and packages the chart for a release.
//
//	go run ./hack/chart manifests [-version vX.Y.Z] [-out deploy]
//	go run ./hack/chart package -version vX.Y.Z -out dist
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"

	"github.com/regatta-dev/regatta/deploy"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: chart manifests|package [flags]")
	}
	fl := flag.NewFlagSet(args[0], flag.ContinueOnError)
	deployDir := fl.String("deploy", "deploy", "the deploy folder (chart, values)")
	version := fl.String("version", "", "stamp the chart with this version (vX.Y.Z)")
	out := fl.String("out", "", "output folder (default: the deploy folder for manifests)")
	if err := fl.Parse(args[1:]); err != nil {
		return err
	}
	c, err := deploy.LoadChart(filepath.Join(*deployDir, "charts", "regatta"), *version)
	if err != nil {
		return err
	}
	switch args[0] {
	case "manifests":
		if *out == "" {
			*out = *deployDir
		}
		return manifests(ctx, c, *deployDir, *out)
	case "package":
		if *out == "" || *version == "" {
			return errors.New("package needs -version and -out")
		}
		return pack(c, *out)
	}
	return fmt.Errorf("unknown command %q: want manifests or package", args[0])
}

func manifests(ctx context.Context, c *deploy.Chart, deployDir, out string) error {
	for _, m := range deploy.Manifests {
		data, err := c.RenderManifest(ctx, deployDir, m)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, m.File), data, 0o644); err != nil {
			return err
		}
		fmt.Println(filepath.Join(out, m.File))
	}
	return nil
}

// pack writes out/regatta-X.Y.Z.tgz as helm package lays it out (the
// files .helmignore keeps under regatta/, Chart.yaml first), every entry
// timed at $SOURCE_DATE_EPOCH, so one commit packages to the same bytes;
// then loads it back as Helm would.
func pack(c *deploy.Chart, out string) error {
	files, err := chartFiles(c.FS)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	name := filepath.Join(out, fmt.Sprintf("regatta-%s.tgz", c.Meta.Version))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	mtime := sourceDate()
	for _, f := range files {
		data, err := fs.ReadFile(c.FS, f)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: f, Mode: 0o644, Size: int64(len(data)), ModTime: mtime, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if _, err := loader.LoadArchive(bytes.NewReader(buf.Bytes())); err != nil {
		return fmt.Errorf("the packaged chart does not load: %w", err)
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Println(name)
	return nil
}

// chartFiles lists the chart's files that .helmignore and Helm's default
// rules keep, Chart.yaml first, then by path.
func chartFiles(fsys fs.FS) ([]string, error) {
	rules := ignore.Empty()
	if data, err := fs.ReadFile(fsys, "regatta/.helmignore"); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf(".helmignore: %w", err)
		}
	}
	rules.AddDefaults()
	var files []string
	err := fs.WalkDir(fsys, "regatta", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "regatta" {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if rules.Ignore(strings.TrimPrefix(p, "regatta/"), info) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	sort.SliceStable(files, func(i, j int) bool {
		ci, cj := files[i] == "regatta/Chart.yaml", files[j] == "regatta/Chart.yaml"
		if ci != cj {
			return ci
		}
		return files[i] < files[j]
	})
	return files, err
}

// sourceDate is $SOURCE_DATE_EPOCH (the commit's date in a release), else now.
func sourceDate() time.Time {
	if s, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64); err == nil {
		return time.Unix(s, 0).UTC()
	}
	return time.Now().UTC()
}
