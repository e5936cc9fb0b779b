package reconciler

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// TestTemplateBombFailsOnlyItsPair runs template bombs through the daemon:
// a loop in a template: true file and one in a templated path (counts
// computed, so only the execution limits stop them). The pass ends in
// bounded time, every other pair is applied, the bombs' pairs say which
// file and line, and the commit that removes them is applied.
func TestTemplateBombFailsOnlyItsPair(t *testing.T) {
	ctx := context.Background()
	loop := `{{ range (int "100000000000000") }}{{ end }}`
	files := map[string]string{
		"profiles/ok.yaml":    profileYAML("ok", "env: prod", "  addons:\n  - name: ok\n    manifests: {path: ok}\n"),
		"ok/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb-ok, namespace: default}\n",
		"profiles/bomb.yaml":  profileYAML("bomb", "env: prod", "  addons:\n  - name: bomb\n    template: true\n    manifests: {path: bomb}\n"),
		"bomb/cm.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb-file, namespace: default}\ndata:\n  v: '" + loop + "'\n",
		"profiles/pbomb.yaml": profileYAML("pbomb", "env: prod", "  addons:\n  - name: pbomb\n    manifests:\n      path: 'pok"+loop+"'\n"),
		"pok/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb-pok, namespace: default}\n",
	}
	f, h := oneClusterFleet(t, files)
	start := time.Now()
	res, _ := h.d.RunOnce(ctx)
	if elapsed := time.Since(start); elapsed > time.Minute {
		t.Errorf("the pass took %s", elapsed)
	}
	got := pairs(res, "c37")
	if got["ok"].State != status.StateApplied || configMap(t, "c37", "default", "bomb-ok") == nil {
		t.Errorf("ok: %s %+v", got["ok"].State, got["ok"].Error)
	}
	for name, file := range map[string]string{"bomb": "bomb/cm.yaml", "pbomb": "profiles/pbomb.yaml"} {
		e := got[name].Error
		if got[name].State != status.StateFailed || e == nil || e.File != file || e.Line == 0 ||
			!strings.Contains(e.Message, "template limit exceeded") {
			t.Errorf("%s: %s %+v, want Failed at %s with a line", name, got[name].State, e, file)
		}
	}
	f.Commit("defuse", map[string]string{
		"bomb/cm.yaml":        strings.Replace(files["bomb/cm.yaml"], loop, "fixed", 1),
		"profiles/pbomb.yaml": strings.Replace(files["profiles/pbomb.yaml"], loop, "", 1),
	})
	res, _ = h.d.RunOnce(ctx)
	got = pairs(res, "c37")
	for _, name := range []string{"ok", "bomb", "pbomb"} {
		if got[name].State != status.StateApplied {
			t.Errorf("after the fix, %s: %s %+v", name, got[name].State, got[name].Error)
		}
	}
	if configMap(t, "c37", "default", "bomb-file")["v"] != "fixed" {
		t.Error("the fixed file was not applied")
	}
}
