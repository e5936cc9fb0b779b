package apply_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// driftLog collects the corrections reported through Options.OnDrift.
type driftLog struct {
	mu     sync.Mutex
	events []apply.DriftEvent
}

func (d *driftLog) add(ev apply.DriftEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = append(d.events, ev)
}

func (d *driftLog) count(name string, action apply.Action) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, ev := range d.events {
		if ev.Object.Name == name && ev.Action == action && ev.Err == nil {
			n++
		}
	}
	return n
}

func mergePatch(t *testing.T, k client.Client, obj client.Object, patch string) {
	t.Helper()
	if err := k.Patch(t.Context(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// Drift: an object edited out of band and one deleted are restored within
// seconds; an excluded path (/spec/replicas) and an opted-out object are left.
func TestDriftCorrection(t *testing.T) {
	ns := "drift"
	log := &driftLog{}
	opts := testOptions()
	opts.OnDrift = log.add
	m := newManager(t, opts)
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	optOut := configMap(ns, "opted-out", map[string]string{"v": "1"})
	optOut.SetAnnotations(map[string]string{apply.AnnotationDriftDetection: apply.Disabled})
	req := apply.Request{Profile: "drift", RenderHash: "h1", SyncMode: spec.SyncModeContinuousWithDriftDetection,
		DriftExclusions: []spec.DriftExclusion{{Target: &spec.PatchSelector{Kind: "Deployment"}, Paths: []string{"/spec/replicas"}}},
		Steps: []apply.Step{step("a", append([]*unstructured.Unstructured{namespace(ns),
			configMap(ns, "edited", map[string]string{"v": "1"}), configMap(ns, "deleted", map[string]string{"v": "1"}), optOut},
			objects(t, "deployment.yaml", "NAMESPACE", ns, "NAME", "scaled")...)...)}}
	readyWhenCreated(t, k, ns, "scaled")
	mustApplied(t, c.Apply(t.Context(), req))

	dep := get(t, k, deployGVK, ns, "scaled")
	mergePatch(t, k, dep, `{"spec":{"replicas":5}}`)
	mergePatch(t, k, getCM(t, k, ns, "opted-out"), `{"data":{"v":"changed"}}`)
	mergePatch(t, k, getCM(t, k, ns, "edited"), `{"data":{"v":"changed","extra":"x"}}`)
	took := testenv.WaitFor(t, 10*time.Second, "edited ConfigMap restored", func() bool {
		cm := getCM(t, k, ns, "edited")
		return cm.Data["v"] == "1"
	})
	t.Logf("edit corrected in %s", took.Round(time.Millisecond))
	if err := k.Delete(t.Context(), getCM(t, k, ns, "deleted")); err != nil {
		t.Fatal(err)
	}
	took = testenv.WaitFor(t, 10*time.Second, "deleted ConfigMap re-created", func() bool { return getCM(t, k, ns, "deleted") != nil })
	t.Logf("deletion corrected in %s", took.Round(time.Millisecond))

	time.Sleep(time.Second) // give the watcher time to (wrongly) act on the others
	if r, _, _ := unstructured.NestedInt64(get(t, k, deployGVK, ns, "scaled").Object, "spec", "replicas"); r != 5 {
		t.Errorf("excluded /spec/replicas was reset to %d", r)
	}
	if v := getCM(t, k, ns, "opted-out").Data["v"]; v != "changed" {
		t.Errorf("opted-out ConfigMap was corrected (v=%s)", v)
	}
	if log.count("edited", apply.ActionConfigured) < 1 || log.count("deleted", apply.ActionCreated) != 1 ||
		log.count("scaled", apply.ActionConfigured) != 0 {
		t.Errorf("drift events: %+v", log.events)
	}
	events, err := c.DriftCheck(t.Context())
	if err != nil || len(events) != 0 {
		t.Errorf("DriftCheck on a converged cluster: %v, %v", events, err)
	}
	res := c.Apply(t.Context(), req)
	if !res.Skipped || res.DriftCorrections < 2 {
		t.Errorf("pass after corrections: skipped %v, corrections %d", res.Skipped, res.DriftCorrections)
	}
}

// A change of the render is not undone by the watcher, and a withdrawn
// profile is no longer corrected.
func TestDriftFollowsNewRenderAndWithdraw(t *testing.T) {
	ns := "drift2"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	req := func(hash, v string) apply.Request {
		return apply.Request{Profile: "drift2", RenderHash: hash, SyncMode: spec.SyncModeContinuousWithDriftDetection,
			StopMatchingBehavior: spec.StopMatchingLeavePolicies,
			Steps:                []apply.Step{step("a", namespace(ns), configMap(ns, "cm", map[string]string{"v": v}))}}
	}
	mustApplied(t, c.Apply(t.Context(), req("h1", "1")))
	mustApplied(t, c.Apply(t.Context(), req("h2", "2")))
	testenv.HoldsFor(t, time.Second, "the new render (the watcher restores no previous one)", func() bool {
		return getCM(t, k, ns, "cm").Data["v"] == "2"
	})
	if res := c.Withdraw(t.Context(), "drift2", ""); res.State != apply.StateWithdrawn {
		t.Fatal(res)
	}
	mergePatch(t, k, getCM(t, k, ns, "cm"), `{"data":{"v":"mine"}}`)
	testenv.HoldsFor(t, time.Second, "the edit of a withdrawn (left) profile's object (no correction)", func() bool {
		return getCM(t, k, ns, "cm").Data["v"] == "mine"
	})
}

// A paused cluster is not corrected; the first pass after the pause applies
// in full and resumes drift correction.
func TestDriftPausedCluster(t *testing.T) {
	ns := "drift3"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	req := apply.Request{Profile: "drift3", RenderHash: "h1", SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "cm", map[string]string{"v": "1"}))}}
	mustApplied(t, c.Apply(t.Context(), req))
	c.Pause()
	mergePatch(t, k, getCM(t, k, ns, "cm"), `{"data":{"v":"paused"}}`)
	testenv.HoldsFor(t, time.Second, "the edit on a paused cluster (no correction)", func() bool {
		return getCM(t, k, ns, "cm").Data["v"] == "paused"
	})
	res := c.Apply(t.Context(), req)
	mustApplied(t, res)
	if res.Skipped || getCM(t, k, ns, "cm").Data["v"] != "1" {
		t.Fatalf("first pass after the pause: skipped %v, v=%s", res.Skipped, getCM(t, k, ns, "cm").Data["v"])
	}
	mergePatch(t, k, getCM(t, k, ns, "cm"), `{"data":{"v":"again"}}`)
	testenv.WaitFor(t, 10*time.Second, "correction after the pause", func() bool { return getCM(t, k, ns, "cm").Data["v"] == "1" })
}

// Removing regatta's labels out of band is drift too: they come back.
func TestDriftRestoresRemovedLabels(t *testing.T) {
	ns := "drift4"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "drift4", RenderHash: "h1",
		SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps:    []apply.Step{step("a", namespace(ns), configMap(ns, "cm", nil))}}))
	mergePatch(t, k, getCM(t, k, ns, "cm"), `{"metadata":{"labels":{"regatta.dev/profile":null}}}`)
	testenv.WaitFor(t, 10*time.Second, "profile label restored", func() bool {
		return getCM(t, k, ns, "cm").Labels[apply.LabelProfile] == "drift4"
	})
}

// DriftCheck, the safety net of every --drift-interval, restores what the
// watches missed (an edit, a deletion, a removed label) with one LIST per
// tracked kind; on a converged cluster it makes those LISTs and nothing else.
func TestDriftCheckSafetyNet(t *testing.T) {
	ns := "drift5"
	opts, counter := countedOptions()
	m := newManager(t, opts)
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	optOut := configMap(ns, "opted-out", map[string]string{"v": "1"})
	optOut.SetAnnotations(map[string]string{apply.AnnotationDriftDetection: apply.Disabled})
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "drift5", RenderHash: "h1",
		SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps: []apply.Step{step("a", namespace(ns), optOut, configMap(ns, "edited", map[string]string{"v": "1"}),
			configMap(ns, "deleted", map[string]string{"v": "1"}), configMap(ns, "unlabelled", map[string]string{"v": "1"}),
			configMap(ns, "kept", map[string]string{"v": "1"}))}}))
	c.StopDriftWatches()

	mergePatch(t, k, getCM(t, k, ns, "edited"), `{"data":{"v":"changed"}}`)
	mergePatch(t, k, getCM(t, k, ns, "opted-out"), `{"data":{"v":"changed"}}`)
	mergePatch(t, k, getCM(t, k, ns, "unlabelled"), `{"metadata":{"labels":{"regatta.dev/profile":null}}}`)
	mergePatch(t, k, getCM(t, k, ns, "kept"), `{"data":{"other":"added by someone else"}}`)
	if err := k.Delete(t.Context(), getCM(t, k, ns, "deleted")); err != nil {
		t.Fatal(err)
	}
	events, err := c.DriftCheck(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := actionsByName(events)
	want := map[string]apply.Action{"edited": apply.ActionConfigured, "deleted": apply.ActionCreated,
		"unlabelled": apply.ActionConfigured}
	if len(got) != len(want) {
		t.Errorf("corrections %v, want %v", got, want)
	}
	for name, action := range want {
		if got[name] != action {
			t.Errorf("%s: action %q, want %q (all: %v)", name, got[name], action, got)
		}
	}
	if getCM(t, k, ns, "edited").Data["v"] != "1" || getCM(t, k, ns, "deleted") == nil ||
		getCM(t, k, ns, "unlabelled").Labels[apply.LabelProfile] != "drift5" {
		t.Error("drifted objects not restored")
	}
	if getCM(t, k, ns, "opted-out").Data["v"] != "changed" || getCM(t, k, ns, "kept").Data["other"] == "" {
		t.Error("an opted-out object or another manager's field was reverted")
	}

	counter.reset()
	if events, err := c.DriftCheck(t.Context()); err != nil || len(events) != 0 {
		t.Fatalf("DriftCheck on a converged cluster: %v, %v", events, err)
	}
	if reqs := counter.reset(); counter.writes() != 0 || len(reqs) != 1 || reqs["GET"] != 2 {
		t.Errorf("converged DriftCheck made %v; want 2 GETs (a LIST of Namespaces and of ConfigMaps)", reqs)
	}
}

// The watches keep objects no drift-detected profile tracks as stubs: a
// profile that switches to drift detection without changing them (no watch
// event makes the stubs whole) compares them with the API server's copy,
// and its objects are corrected from then on; before, they were not.
func TestDriftTracksObjectsCachedBeforehand(t *testing.T) {
	ns := "drift6"
	log := &driftLog{}
	opts := testOptions()
	opts.OnDrift = log.add
	m := newManager(t, opts)
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "drift6-watched", RenderHash: "h1",
		SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps:    []apply.Step{step("a", namespace(ns), configMap(ns, "watched", map[string]string{"v": "1"}))}}))
	plain := apply.Request{Profile: "drift6", RenderHash: "h1", SyncMode: spec.SyncModeContinuous,
		Steps: []apply.Step{step("a", configMap(ns, "cm", map[string]string{"v": "1"}))}}
	mustApplied(t, c.Apply(t.Context(), plain))
	mergePatch(t, k, getCM(t, k, ns, "cm"), `{"data":{"v":"untracked edit"}}`)
	testenv.HoldsFor(t, time.Second, "the edit of a profile without drift detection (no correction)", func() bool {
		return getCM(t, k, ns, "cm").Data["v"] == "untracked edit"
	})
	mergePatch(t, k, getCM(t, k, ns, "cm"), `{"data":{"v":"1"}}`)

	tracked := plain
	tracked.SyncMode = spec.SyncModeContinuousWithDriftDetection
	mustApplied(t, c.Apply(t.Context(), tracked))
	if !c.Drift().Tracked("drift6") {
		t.Fatal("profile not tracked after switching to drift detection")
	}
	time.Sleep(500 * time.Millisecond) // the first comparison reads the stubbed object
	if n := log.count("cm", apply.ActionConfigured); n != 0 {
		t.Fatalf("an unchanged object was re-applied %d times after tracking began", n)
	}
	mergePatch(t, k, getCM(t, k, ns, "cm"), `{"data":{"v":"tracked edit"}}`)
	testenv.WaitFor(t, 10*time.Second, "edit restored", func() bool { return getCM(t, k, ns, "cm").Data["v"] == "1" })
	mergePatch(t, k, getCM(t, k, ns, "cm"), `{"metadata":{"labels":{"regatta.dev/profile":null}}}`)
	testenv.WaitFor(t, 10*time.Second, "label restored", func() bool {
		return getCM(t, k, ns, "cm").Labels[apply.LabelProfile] == "drift6"
	})
}

// Objects of a drift-detected profile applied while the watches run are
// cached whole from the start, so tracking them reads none of them: the
// only reads are the pass's own (inventory, namespace, the conflict check's
// list) and the watches' lists of the kinds, which widen to the new
// profile.
func TestDriftTrackingReadsNothing(t *testing.T) {
	ns := "drift-expect"
	log := &requestLog{}
	opts := testOptions()
	opts.Client.WrapTransport = log.wrap
	c := target(t, newManager(t, opts), mainCluster)
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "drift-expect-a", RenderHash: "h1",
		SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps:    []apply.Step{step("a", namespace(ns), configMap(ns, "a", nil))}}))
	testenv.WaitFor(t, 10*time.Second, "drift watches listed", c.Drift().HasSynced)
	var objs []*unstructured.Unstructured
	for i := range 5 {
		objs = append(objs, configMap(ns, fmt.Sprintf("b-%d", i), map[string]string{"v": "1"}))
	}
	log.reset()
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "drift-expect-b", RenderHash: "h1",
		SyncMode: spec.SyncModeContinuousWithDriftDetection, Steps: []apply.Step{step("b", objs...)}}))
	testenv.WaitFor(t, 10*time.Second, "drift-expect-b tracked", func() bool { return c.Drift().Tracked("drift-expect-b") })
	time.Sleep(time.Second) // the first comparison of the new profile's objects runs in the background
	lines := log.reset()
	for i := range 5 {
		for _, l := range mentioning(lines, fmt.Sprintf("b-%d", i)) {
			if strings.HasPrefix(l, "GET ") {
				t.Errorf("tracking read an object it applied: %s", l)
			}
		}
	}
	if gets := countPrefix(lines, "GET "); gets > 5 {
		t.Errorf("applying and tracking 5 objects made %d reads: %v", gets, lines)
	}
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// actionsByName are the drift corrections' actions by object name.
func actionsByName(events []apply.DriftEvent) map[string]apply.Action {
	got := map[string]apply.Action{}
	for _, ev := range events {
		got[ev.Object.Name] = ev.Action
	}
	return got
}
