package helm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/spec"
)

// locateFS reads a chart folder; its digest covers every file that is not
// ignored by .helmignore.
func locateFS(s source) (chartRef, error) {
	files, err := readChartFS(s.fsys, s.dir)
	if err != nil {
		return chartRef{}, err
	}
	var meta chart.Metadata
	for _, f := range files {
		if f.Name == "Chart.yaml" {
			if err := yaml.Unmarshal(f.Data, &meta); err != nil {
				return chartRef{}, fmt.Errorf("%s/Chart.yaml: %w", s.dir, err)
			}
		}
	}
	if meta.Name == "" {
		return chartRef{}, fmt.Errorf("%s: no Chart.yaml with a name", s.dir)
	}
	if s.version != "" {
		if _, err := selectVersion([]string{meta.Version}, s.version); err != nil {
			return chartRef{}, fmt.Errorf("%s/Chart.yaml: version %s does not match chartVersion %q", s.dir, meta.Version, s.version)
		}
	}
	return chartRef{name: meta.Name, version: meta.Version, digest: filesDigest(files),
		load: func(context.Context) (*chart.Chart, error) {
			c, err := loader.LoadFiles(files)
			if err != nil {
				return nil, fmt.Errorf("loading chart folder %s: %w", s.dir, err)
			}
			return c, nil
		}}, nil
}

// readChartFS returns the chart's files relative to dir, honouring
// .helmignore and Helm's default rules. Only regular files are read.
func readChartFS(fsys fs.FS, dir string) ([]*loader.BufferedFile, error) {
	rules, err := helmIgnore(fsys, dir)
	if err != nil {
		return nil, err
	}
	var files []*loader.BufferedFile
	err = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := relPath(dir, p)
		if rel == "" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if rules.Ignore(rel, info) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := p
		if d.Type()&fs.ModeSymlink != 0 {
			if target, err = chartLinkTarget(fsys, dir, p); err != nil {
				return err
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		data, err := fs.ReadFile(fsys, target)
		files = append(files, &loader.BufferedFile{Name: rel, Data: data})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading chart folder %s: %w", dir, err)
	}
	return files, nil
}

// chartLinkTarget resolves a symlink in a chart folder: it may name a file
// of the same chart; a link out of the folder, to a folder, or one that
// cannot be followed is an error naming the link (Helm would follow it and
// read whatever it names).
func chartLinkTarget(fsys fs.FS, dir, link string) (string, error) {
	resolved, err := spec.ResolvePath(fsys, link)
	if err != nil {
		return "", fmt.Errorf("symlink %s: %w", link, err)
	}
	if dir != "." && !spec.Inside(dir, resolved) {
		return "", linkEscape(fmt.Sprintf("symlink %s points to %s, outside the chart folder %s", link, resolved, dir))
	}
	info, err := fs.Stat(fsys, resolved)
	if err != nil {
		return "", fmt.Errorf("symlink %s: %w", link, err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("symlink %s points to %s, which is not a file (a chart folder may link only its own files)", link, resolved)
	}
	return resolved, nil
}

// linkEscape is a chart symlink leading out of the chart folder;
// errors.Is(spec.ErrPathEscapes).
type linkEscape string

func (e linkEscape) Error() string { return string(e) }

func (e linkEscape) Is(target error) bool { return target == spec.ErrPathEscapes }

func helmIgnore(fsys fs.FS, dir string) (*ignore.Rules, error) {
	rules := ignore.Empty()
	if data, err := fs.ReadFile(fsys, path.Join(dir, ignore.HelmIgnore)); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", dir, ignore.HelmIgnore, err)
		}
	}
	rules.AddDefaults()
	return rules, nil
}

func relPath(dir, p string) string {
	if dir == "." {
		if p == "." {
			return ""
		}
		return p
	}
	return strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
}

// filesDigest hashes names and contents in walk (lexical) order.
func filesDigest(files []*loader.BufferedFile) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.Name, len(f.Data))
		h.Write(f.Data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
