package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// TestPackageAndManifests packages the chart stamped with a release's
// version and renders the release's plain manifests.
func TestPackageAndManifests(t *testing.T) {
	out, again := t.TempDir(), t.TempDir()
	ctx := context.Background()
	t.Setenv("SOURCE_DATE_EPOCH", "1767323045")
	for _, dir := range []string{out, again} {
		if err := run(ctx, []string{"package", "-deploy", "../../deploy", "-version", "v1.2.3", "-out", dir}); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := os.ReadFile(filepath.Join(out, "regatta-1.2.3.tgz"))
	b, _ := os.ReadFile(filepath.Join(again, "regatta-1.2.3.tgz"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("two packages of one chart differ")
	}
	c, err := loader.Load(filepath.Join(out, "regatta-1.2.3.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.Version != "1.2.3" || c.Metadata.AppVersion != "v1.2.3" || c.Schema == nil {
		t.Errorf("packaged chart: version %s appVersion %s, schema %v", c.Metadata.Version, c.Metadata.AppVersion, c.Schema != nil)
	}
	if err := run(ctx, []string{"manifests", "-deploy", "../../deploy", "-version", "v1.2.3", "-out", out}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"regatta.yaml", "regatta-sharded.yaml"} {
		data, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "image: ghcr.io/regatta-dev/regatta:v1.2.3\n") {
			t.Errorf("%s does not run the release's image", f)
		}
	}
	if err := run(ctx, []string{"package", "-deploy", "../../deploy", "-version", "1.2.3", "-out", out}); err == nil ||
		!strings.Contains(err.Error(), "want vX.Y.Z") {
		t.Errorf("version without v: %v", err)
	}
}
