package apply_test

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// The drift watches select the drift-detected profiles only: objects of a
// profile without drift detection never reach the cache, a profile that
// turns drift-detected widens the watches, and an object relabelled out of
// the watches' selection is still restored.
func TestDriftWatchesSelectDriftProfiles(t *testing.T) {
	ns := "drift-scope"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	plain := func(names ...string) apply.Request {
		var objs = []*unstructured.Unstructured{namespace(ns)}
		for _, n := range names {
			objs = append(objs, configMap(ns, n, map[string]string{"v": "1"}))
		}
		return apply.Request{Profile: "scope-plain", RenderHash: names[len(names)-1], SyncMode: spec.SyncModeContinuous,
			Steps: []apply.Step{step("a", objs...)}}
	}
	drift := func(profile string, names ...string) apply.Request {
		var objs []*unstructured.Unstructured // in scope-plain's namespace
		for _, n := range names {
			objs = append(objs, configMap(ns, n, map[string]string{"v": "1"}))
		}
		return apply.Request{Profile: profile, RenderHash: names[len(names)-1],
			SyncMode: spec.SyncModeContinuousWithDriftDetection, Steps: []apply.Step{step("a", objs...)}}
	}
	cached := func(name string) bool {
		keys, _ := c.Drift().WatchedKeys("", "ConfigMap")
		return slices.Contains(keys, ns+"/"+name)
	}
	mustApplied(t, c.Apply(t.Context(), plain("plain-1")))
	mustApplied(t, c.Apply(t.Context(), drift("scope-a", "a-1")))
	eventually(t, 10*time.Second, "a-1 cached", func() bool { return cached("a-1") })
	// One watch stream delivers events in order: plain-2 is created before
	// a-2, so once a-2 is cached, plain-2 would be too had it been selected.
	mustApplied(t, c.Apply(t.Context(), plain("plain-1", "plain-2")))
	mustApplied(t, c.Apply(t.Context(), drift("scope-a", "a-1", "a-2")))
	eventually(t, 10*time.Second, "a-2 cached", func() bool { return cached("a-2") })
	if cached("plain-1") || cached("plain-2") {
		keys, sel := c.Drift().WatchedKeys("", "ConfigMap")
		t.Fatalf("objects of a profile without drift detection in the drift watch (selector %q): %v", sel, keys)
	}

	mustApplied(t, c.Apply(t.Context(), drift("scope-b", "b-1")))
	eventually(t, 10*time.Second, "b-1 cached", func() bool { return cached("b-1") && cached("a-1") })
	if _, sel := c.Drift().WatchedKeys("", "ConfigMap"); sel != "regatta.dev/profile in (scope-a,scope-b)" {
		t.Errorf("selector after a second drift-detected profile: %q", sel)
	}
	if cached("plain-1") {
		t.Error("widening brought a profile without drift detection into the watch")
	}
	mergePatch(t, k, getCM(t, k, ns, "b-1"), `{"metadata":{"labels":{"regatta.dev/profile":"scope-plain"}},"data":{"v":"moved"}}`)
	eventually(t, 10*time.Second, "b-1 relabelled out of the watch restored", func() bool {
		cm := getCM(t, k, ns, "b-1")
		return cm.Labels[apply.LabelProfile] == "scope-b" && cm.Data["v"] == "1"
	})
}
