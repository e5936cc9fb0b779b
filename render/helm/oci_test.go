package helm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/chartserver"
)

func TestOCIRegistry(t *testing.T) {
	reg := chartserver.NewOCI(t)
	var want string
	for _, v := range []string{"1.1.0", "1.2.0", "1.3.0-rc.1"} {
		tgz, err := os.ReadFile(filepath.Join("testdata", "repo", "fleet-app-"+v+".tgz"))
		if err != nil {
			t.Fatal(err)
		}
		if d := reg.Push(t, "charts/fleet-app", tgz); v == "1.2.0" {
			want = d
		}
	}
	dir := t.TempDir()
	opts := Options{CacheDir: dir, PlainHTTP: true, RegistryConfig: filepath.Join(dir, "none.json")}
	req := appRequest("oci://" + strings.TrimPrefix(reg.URL, "http://") + "/charts")
	req.ChartVersion = "~1.2"
	ctx := context.Background()
	r := New(opts)
	res, err := r.Render(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.ChartVersion != "1.2.0" || res.ChartDigest != want {
		t.Errorf("version %s digest %s, want 1.2.0 %s", res.ChartVersion, res.ChartDigest, want)
	}
	golden(t, "fleet-app.yaml", dumpSteps(t, res.Steps))

	before := reg.Requests.Load()
	if _, err := r.Render(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := reg.Requests.Load() - before; n != 0 {
		t.Errorf("second render made %d registry requests, want 0", n)
	}
	// A new process re-lists tags and resolves the tag, but pulls nothing.
	before = reg.Requests.Load()
	if _, err := New(opts).Render(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := reg.Requests.Load() - before; n > 3 {
		t.Errorf("a render from the disk cache made %d registry requests, want at most 3 (ping, tags, manifest HEAD)", n)
	}
	req.ChartVersion = "^2"
	if _, err := r.Render(ctx, req); err == nil || !strings.Contains(err.Error(), `no version matches "^2" in oci://`) {
		t.Errorf("got %v", err)
	}
}
