// Command chart renders the plain manifests of deploy/ from regatta's Helm
// chart, and packages the chart for a release.
//
//	go run ./hack/chart manifests [-version vX.Y.Z] [-out deploy]
//	go run ./hack/chart package -version vX.Y.Z -out dist
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

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

// pack writes the chart's files to a temporary folder and packages it as
// helm package does (.helmignore applies): out/regatta-X.Y.Z.tgz.
func pack(c *deploy.Chart, out string) error {
	tmp, err := os.MkdirTemp("", "regatta-chart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(tmp, c.FS); err != nil {
		return err
	}
	ch, err := loader.LoadDir(filepath.Join(tmp, "regatta"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	name, err := chartutil.Save(ch, out)
	if err != nil {
		return err
	}
	fmt.Println(name)
	return nil
}
