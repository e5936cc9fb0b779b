package render

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/spec"
)

func helmRenderer(t testing.TB) *helm.Renderer {
	return helm.New(helm.Options{CacheDir: t.TempDir()})
}

func TestHelmGolden(t *testing.T) {
	fsys := os.DirFS(repoDir)
	c := prodCluster()
	c.APIVersions = []string{"v1", "apps/v1", "example.org/v1"}
	r := New(Options{Helm: helmRenderer(t)})
	res, err := r.Render(context.Background(), request(t, fsys, "helm", c))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "helm", dump(t, res))
}

func TestHelmErrors(t *testing.T) {
	fsys := os.DirFS(repoDir)
	r := New(Options{Helm: helmRenderer(t)})
	_, err := r.Render(context.Background(), request(t, fsys, "helm-missing-values", prodCluster()))
	assertError(t, err, "helm-missing-values",
		`profile helm-missing-values: addon demo: profiles/helm-missing-values.yaml:13: spec.addons[0].helm.valuesFiles[1]: values/missing.yaml does not exist`,
		"profiles/helm-missing-values.yaml", 13)

	_, err = r.Render(context.Background(), request(t, fsys, "helm-broken", prodCluster()))
	assertError(t, err, "helm-broken", `profile helm-broken: addon broken: charts/broken/templates/cm.yaml:6: helm: `, "charts/broken/templates/cm.yaml", 6)

	_, err = New(Options{}).Render(context.Background(), request(t, fsys, "helm", prodCluster()))
	assertError(t, err, "helm", `spec.addons[0].helm: helm: no chart renderer configured`, "profiles/helm.yaml", 9)
}

// chartRepo serves the demo chart, packaged, from an httptest chart
// repository; change repackages it with other default values.
func chartRepo(t *testing.T) (url string, change func(message string)) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	change = func(message string) {
		src := filepath.Join(t.TempDir(), "demo")
		must(t, os.CopyFS(src, os.DirFS(filepath.Join(repoDir, "charts", "demo"))))
		values := "replicas: 1\nimage: {repository: example.org/demo, tag: \"1.0\"}\nmessage: " + message + "\n"
		must(t, os.WriteFile(filepath.Join(src, "values.yaml"), []byte(values), 0o644))
		c, err := loader.LoadDir(src)
		must(t, err)
		archive, err := chartutil.Save(c, dir)
		must(t, err)
		data, err := os.ReadFile(archive)
		must(t, err)
		index := fmt.Sprintf("apiVersion: v1\nentries:\n  demo:\n  - apiVersion: v2\n    name: demo\n"+
			"    version: 0.1.0\n    digest: %x\n    urls: [%s/%s]\n", sha256.Sum256(data), srv.URL, filepath.Base(archive))
		must(t, os.WriteFile(filepath.Join(dir, "index.yaml"), []byte(index), 0o644))
	}
	change("first")
	return srv.URL, change
}

func TestHelmRepositoryChartDigestInKey(t *testing.T) {
	url, change := chartRepo(t)
	fsys := memRepo(t)
	prof := withSource(loadProfile(t, fsys, "plain"), spec.Addon{Name: "demo", Helm: &spec.HelmSource{
		RepositoryURL: url, ChartName: "demo", ChartVersion: "0.1.0", ReleaseName: "demo", ReleaseNamespace: "demo",
	}})
	r := New(Options{Helm: helm.New(helm.Options{CacheDir: t.TempDir(), IndexTTL: time.Nanosecond})})
	message := func() string {
		t.Helper()
		res, err := r.Render(context.Background(), Request{FS: fsys, Revision: "r", Profile: prof, Cluster: prodCluster()})
		must(t, err)
		for _, o := range res.Objects() {
			if o.GetName() == "demo-settings" {
				m, _, _ := unstructuredString(o.Object, "data", "message")
				return m
			}
		}
		return ""
	}
	if m := message(); m != "first" {
		t.Fatalf("message %q, want first", m)
	}
	message()
	change("second")
	if m := message(); m != "second" {
		t.Errorf("after the chart changed under the same version: message %q, want second", m)
	}
	if hits, misses := r.CacheStats(); hits != 1 || misses != 2 {
		t.Errorf("hits %d misses %d, want 1 and 2", hits, misses)
	}
}
