package apply_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/internal/testenv"
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
	testenv.WaitFor(t, 10*time.Second, "a-1 cached", func() bool { return cached("a-1") })
	// One watch stream delivers events in order: plain-2 is created before
	// a-2, so once a-2 is cached, plain-2 would be too had it been selected.
	mustApplied(t, c.Apply(t.Context(), plain("plain-1", "plain-2")))
	mustApplied(t, c.Apply(t.Context(), drift("scope-a", "a-1", "a-2")))
	testenv.WaitFor(t, 10*time.Second, "a-2 cached", func() bool { return cached("a-2") })
	if cached("plain-1") || cached("plain-2") {
		keys, sel := c.Drift().WatchedKeys("", "ConfigMap")
		t.Fatalf("objects of a profile without drift detection in the drift watch (selector %q): %v", sel, keys)
	}

	mustApplied(t, c.Apply(t.Context(), drift("scope-b", "b-1")))
	testenv.WaitFor(t, 10*time.Second, "b-1 cached", func() bool { return cached("b-1") && cached("a-1") })
	if _, sel := c.Drift().WatchedKeys("", "ConfigMap"); sel != "regatta.dev/profile in (scope-a,scope-b)" {
		t.Errorf("selector after a second drift-detected profile: %q", sel)
	}
	if cached("plain-1") {
		t.Error("widening brought a profile without drift detection into the watch")
	}
	mergePatch(t, k, getCM(t, k, ns, "b-1"), `{"metadata":{"labels":{"regatta.dev/profile":"scope-plain"}},"data":{"v":"moved"}}`)
	testenv.WaitFor(t, 10*time.Second, "b-1 relabelled out of the watch restored", func() bool {
		cm := getCM(t, k, ns, "b-1")
		return cm.Labels[apply.LabelProfile] == "scope-b" && cm.Data["v"] == "1"
	})
}

// A profile tracked just before another one widens the watches keeps its
// drift correction: the informers it waited for were replaced, and it
// waits for their replacements instead (the replaced ones never list,
// here because their list is held up past the sync timeout).
func TestDriftSurvivesWideningBeforeSync(t *testing.T) {
	ns := "drift-race"
	opts := testOptions()
	opts.StageTimeout = 2 * time.Second
	opts.Client.WrapTransport = func(_ string, rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			q := req.URL.Query()
			if q.Get("watch") != "true" && q.Get("labelSelector") == "regatta.dev/profile in (drift-race-a)" {
				select { // the first scope's lists answer after the timeout, if ever
				case <-req.Context().Done():
					return nil, req.Context().Err()
				case <-time.After(5 * time.Second):
				}
			}
			return rt.RoundTrip(req)
		})
	}
	m := newManager(t, opts)
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "drift-race-plain", RenderHash: "h1",
		Steps: []apply.Step{step("a", namespace(ns))}}))
	for _, p := range []string{"drift-race-a", "drift-race-b"} {
		mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: p, RenderHash: "h1",
			SyncMode: spec.SyncModeContinuousWithDriftDetection,
			Steps:    []apply.Step{step("a", configMap(ns, p, map[string]string{"v": "1"}))}}))
	}
	deadline := time.Now().Add(3 * time.Second) // past the sync timeout
	for time.Now().Before(deadline) {
		if !c.Drift().Tracked("drift-race-a") {
			t.Fatal("drift-race-a untracked: it waited for the replaced watches")
		}
		time.Sleep(50 * time.Millisecond)
	}
	mergePatch(t, k, getCM(t, k, ns, "drift-race-a"), `{"data":{"v":"edited"}}`)
	testenv.WaitFor(t, 10*time.Second, "drift-race-a's edit restored", func() bool {
		return getCM(t, k, ns, "drift-race-a").Data["v"] == "1"
	})
}

// Drift-detected profiles declared before they are applied (the plan's
// ScopeDrift) start the watches once, with the whole selection; declaring
// the same profiles again, or fewer while they are tracked, restarts
// nothing.
func TestDriftScopeDeclaredUpFront(t *testing.T) {
	ns := "drift-declared"
	m := newManager(t, testOptions())
	c := target(t, m, mainCluster)
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "declared-plain", RenderHash: "h1",
		Steps: []apply.Step{step("a", namespace(ns))}}))
	profiles := []string{"declared-a", "declared-b"}
	c.ScopeDrift(profiles)
	for _, p := range profiles {
		mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: p, RenderHash: "h1",
			SyncMode: spec.SyncModeContinuousWithDriftDetection,
			Steps:    []apply.Step{step("a", configMap(ns, p, map[string]string{"v": "1"}))}}))
	}
	testenv.WaitFor(t, 10*time.Second, "drift watches listed", c.Drift().HasSynced)
	informers := c.Client().Informers()
	if n := informers.Started(); n != 1 {
		t.Errorf("%d informers started for one kind of two declared profiles, want 1", n)
	}
	c.ScopeDrift(profiles)
	c.ScopeDrift(profiles[:1])
	if n := informers.Started(); n != 1 {
		t.Errorf("%d informers started after declaring the same scope and a smaller one with both tracked, want 1", n)
	}
	if _, sel := c.Drift().WatchedKeys("", "ConfigMap"); sel != "regatta.dev/profile in (declared-a,declared-b)" {
		t.Errorf("selector: %q", sel)
	}
}

// The drift check lists the watched profiles' objects only; an object that
// moved to another profile is not in its lists, and it reads that object
// on its own: the new owner keeps it (it is not re-applied as missing).
func TestDriftCheckLeavesMovedObjects(t *testing.T) {
	ns := "drift-moved"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "moved-plain", RenderHash: "h1",
		Steps: []apply.Step{step("a", namespace(ns))}}))
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "moved-a", RenderHash: "h1",
		SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps:    []apply.Step{step("a", configMap(ns, "mv", map[string]string{"v": "a"}), configMap(ns, "stays", nil))}}))
	c.StopDriftWatches() // only the check acts
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "moved-b", RenderHash: "h1", Tier: new(50),
		Steps: []apply.Step{step("a", configMap(ns, "mv", map[string]string{"v": "b"}))}}))
	if err := k.Delete(t.Context(), getCM(t, k, ns, "stays")); err != nil {
		t.Fatal(err)
	}
	events, err := c.DriftCheck(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Object.Name != "stays" || events[0].Action != apply.ActionCreated {
		t.Errorf("corrections %v, want only stays re-created", events)
	}
	if cm := getCM(t, k, ns, "mv"); cm.Labels[apply.LabelProfile] != "moved-b" || cm.Data["v"] != "b" {
		t.Errorf("the moved object was taken back: labels %v, data %v", cm.Labels, cm.Data)
	}
}
