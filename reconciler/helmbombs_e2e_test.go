package reconciler

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
)

// serveHelmWorker makes this test binary a chart render worker when it
// was started as one (see helmWorker) and exits.
func serveHelmWorker() {
	if os.Getenv(helm.WorkerEnv) == "" {
		return
	}
	if err := helm.ServeWorker(os.Stdin, os.Stdout); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// helmWorker runs chart templates in workers started from this binary.
func helmWorker(t *testing.T, timeout time.Duration) *helm.WorkerOptions {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &helm.WorkerOptions{Command: []string{exe}, Env: []string{helm.WorkerEnv + "=1"}, Timeout: timeout}
}

func chartFiles(dir, name, template string) map[string]string {
	return map[string]string{
		dir + "/Chart.yaml":          "apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n",
		dir + "/values.yaml":         "n: 1\n",
		dir + "/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\ndata: {v: \"{{ .Values.n }}\"}\n",
		dir + "/templates/bomb.yaml": template,
	}
}

func helmProfile(name, path string, values string) string {
	return profileYAML(name, "env: prod", "  addons:\n  - name: "+name+"\n    helm:\n      path: "+path+
		"\n      releaseName: "+name+"\n      releaseNamespace: default\n      values: {"+values+"}\n")
}

// TestChartTemplateBombFailsOnlyItsPair runs a chart whose loop count
// comes from the values through the daemon, next to a plain add-on and a
// sane chart: the pass ends in bounded time, the other pairs are applied,
// the bomb's pair names the chart template and line, and the commit that
// defuses it is applied.
func TestChartTemplateBombFailsOnlyItsPair(t *testing.T) {
	ctx := context.Background()
	loop := "# loops\n\n{{ range (int .Values.n) }}{{ end }}\n"
	files := map[string]string{
		"profiles/ok.yaml":        profileYAML("ok", "env: prod", "  addons:\n  - name: ok\n    manifests: {path: ok}\n"),
		"ok/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hbomb-ok, namespace: default}\n",
		"profiles/chartok.yaml":   helmProfile("chartok", "charts/good", "n: 5"),
		"profiles/chartbomb.yaml": helmProfile("chartbomb", "charts/bomb", "n: 100000000000000"),
	}
	for k, v := range chartFiles("charts/good", "hbomb-good", loop) {
		files[k] = v
	}
	for k, v := range chartFiles("charts/bomb", "hbomb-bomb", loop) {
		files[k] = v
	}
	f, h := oneClusterFleet(t, files)
	charts := helm.New(helm.Options{CacheDir: t.TempDir(), Worker: helmWorker(t, time.Second)})
	t.Cleanup(func() { _ = charts.Close() })
	h.r.opts.Renderer = render.New(render.Options{Helm: charts})
	start := time.Now()
	res, _ := h.d.RunOnce(ctx)
	if elapsed := time.Since(start); elapsed > time.Minute {
		t.Errorf("the pass took %s", elapsed)
	}
	got := pairs(res, "c37")
	for name, cm := range map[string]string{"ok": "hbomb-ok", "chartok": "hbomb-good"} {
		if got[name].State != status.StateApplied || configMap(t, "c37", "default", cm) == nil {
			t.Errorf("%s: %s %+v", name, got[name].State, got[name].Error)
		}
	}
	e := got["chartbomb"].Error
	if got["chartbomb"].State != status.StateFailed || e == nil || e.File != "charts/bomb/templates/bomb.yaml" || e.Line != 3 ||
		!strings.Contains(e.Message, "template limit exceeded") {
		t.Errorf("chartbomb: %s %+v, want Failed at charts/bomb/templates/bomb.yaml:3", got["chartbomb"].State, e)
	}
	f.Commit("defuse", map[string]string{"profiles/chartbomb.yaml": helmProfile("chartbomb", "charts/bomb", "n: 2")})
	res, _ = h.d.RunOnce(ctx)
	got = pairs(res, "c37")
	for _, name := range []string{"ok", "chartok", "chartbomb"} {
		if got[name].State != status.StateApplied {
			t.Errorf("after the fix, %s: %s %+v", name, got[name].State, got[name].Error)
		}
	}
	if configMap(t, "c37", "default", "hbomb-bomb")["v"] != "2" {
		t.Error("the defused chart was not applied")
	}
}
