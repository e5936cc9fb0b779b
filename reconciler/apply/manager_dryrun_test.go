package apply_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

func secret(ns, name, password string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"stringData": map[string]any{"password": password, "user": "admin"},
	}}
}

// DryRun reports create, update (with a diff, Secret values redacted),
// unchanged and delete, and changes nothing: no write other than dry-runs,
// not even the inventory.
func TestDryRun(t *testing.T) {
	ns := "dryrun"
	opts, counter := countedOptions()
	m := newManager(t, opts)
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "dryrun", RenderHash: "h1", Steps: []apply.Step{
		step("a", namespace(ns), configMap(ns, "same", map[string]string{"x": "1"}),
			configMap(ns, "changed", map[string]string{"x": "1"}), configMap(ns, "removed", nil),
			secret(ns, "creds", "old-s3cret")),
	}}))
	invBefore := getCM(t, k, apply.InventoryNamespace, apply.InventoryName("dryrun")).ResourceVersion
	counter.reset()

	objs := objects(t, "crd.yaml", "NAMESPACE", ns+"-new", "SUFFIX", "d")
	res := c.Apply(t.Context(), apply.Request{Profile: "dryrun", RenderHash: "h2", SyncMode: spec.SyncModeDryRun, Steps: []apply.Step{
		step("a", namespace(ns), configMap(ns, "same", map[string]string{"x": "1"}),
			configMap(ns, "changed", map[string]string{"x": "2"}), configMap(ns, "added", nil),
			secret(ns, "creds", "new-s3cret")),
		step("b", objs...),
	}})
	if res.State != apply.StateDryRun || res.Err != nil {
		t.Fatalf("%s\n%s", res, changes(res))
	}
	want := map[string]apply.Action{"same": apply.ActionUnchanged, "changed": apply.ActionConfigured,
		"added": apply.ActionCreated, "removed": apply.ActionDeleted, "creds": apply.ActionConfigured,
		"w1": apply.ActionCreated, "widgetsd.example.com": apply.ActionCreated, ns + "-new": apply.ActionCreated}
	for _, ch := range res.Changes {
		if w, ok := want[ch.Object.Name]; ok && ch.Action != w {
			t.Errorf("%s: %s, want %s", ch.Object, ch.Action, w)
		}
		delete(want, ch.Object.Name)
	}
	if len(want) > 0 {
		t.Errorf("no change reported for %v\n%s", want, changes(res))
	}
	checkDiffs(t, res)
	if n := counter.writes(); n != 0 {
		t.Errorf("DryRun made %d write requests: %v", n, counter.reset())
	}
	if cm := getCM(t, k, ns, "changed"); cm.Data["x"] != "1" || getCM(t, k, ns, "added") != nil || getCM(t, k, ns, "removed") == nil {
		t.Error("DryRun changed the cluster")
	}
	if rv := getCM(t, k, apply.InventoryNamespace, apply.InventoryName("dryrun")).ResourceVersion; rv != invBefore {
		t.Error("DryRun wrote the inventory")
	}
}

func checkDiffs(t *testing.T, res apply.Result) {
	t.Helper()
	cm, _ := actionOf(res, "ConfigMap", "changed")
	if !strings.Contains(cm.Diff, `-  x: "1"`) || !strings.Contains(cm.Diff, `+  x: "2"`) {
		t.Errorf("ConfigMap diff:\n%s", cm.Diff)
	}
	sec, _ := actionOf(res, "Secret", "creds")
	t.Logf("ConfigMap diff:\n%s\nSecret diff:\n%s", cm.Diff, sec.Diff)
	if !strings.Contains(sec.Diff, "password: (redacted, changed)") || !strings.Contains(sec.Diff, "user: (redacted)") {
		t.Errorf("Secret diff does not say which value changed:\n%s", sec.Diff)
	}
	for _, v := range []string{"s3cret", base64.StdEncoding.EncodeToString([]byte("old-s3cret")),
		base64.StdEncoding.EncodeToString([]byte("new-s3cret")), base64.StdEncoding.EncodeToString([]byte("admin"))} {
		if strings.Contains(sec.Diff, v) {
			t.Errorf("Secret diff reveals %q:\n%s", v, sec.Diff)
		}
	}
}

// OneTime applies once, then never updates or deletes.
func TestOneTime(t *testing.T) {
	ns := "onetime"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	req := apply.Request{Profile: "onetime", SyncMode: spec.SyncModeOneTime, RenderHash: "h1",
		Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "cm", map[string]string{"v": "1"}), configMap(ns, "other", nil))}}
	mustApplied(t, c.Apply(t.Context(), req))
	req.RenderHash = "h2"
	req.Steps = []apply.Step{step("a", namespace(ns), configMap(ns, "cm", map[string]string{"v": "2"}))}
	res := c.Apply(t.Context(), req)
	if res.State != apply.StateApplied || !res.Skipped {
		t.Fatalf("second OneTime pass: %s, skipped %v", res, res.Skipped)
	}
	if getCM(t, k, ns, "cm").Data["v"] != "1" || getCM(t, k, ns, "other") == nil {
		t.Error("a OneTime profile was updated or pruned")
	}
	// A restarted daemon knows it from the inventory.
	res = target(t, newManager(t, testOptions()), mainCluster).Apply(t.Context(), req)
	if !res.Skipped || getCM(t, k, ns, "cm").Data["v"] != "1" {
		t.Errorf("OneTime after restart: %s, skipped %v", res, res.Skipped)
	}
}
