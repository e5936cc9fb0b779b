package apply_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// With DriftIntervalOnly (--drift-watches=false) a drift-detected profile
// opens no watch: an edit stays until the drift check, which restores it
// (and a deleted object), and a converged cluster's check costs one
// metadata LIST per kind, as with watches, from the first check after the
// apply on (the apply's resourceVersions are known in sync).
func TestDriftIntervalOnly(t *testing.T) {
	ns := "drift-interval"
	opts, counter := countedOptions()
	opts.DriftIntervalOnly = true
	var watches, whole atomic.Int32 // whole: GETs of whole objects (not metadata)
	counted := opts.Client.WrapTransport
	opts.Client.WrapTransport = func(cluster string, rt http.RoundTripper) http.RoundTripper {
		inner := counted(cluster, rt)
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			switch {
			case strings.Contains(req.URL.RawQuery, "watch=true"):
				watches.Add(1)
			case req.Method == http.MethodGet && !strings.Contains(req.Header.Get("Accept"), "PartialObjectMetadata"):
				whole.Add(1)
			}
			return inner.RoundTrip(req)
		})
	}
	c, k := target(t, newManager(t, opts), mainCluster), kube(t, mainCluster)
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "drift-interval", RenderHash: "h1",
		SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "edited", map[string]string{"v": "1"}),
			configMap(ns, "deleted", map[string]string{"v": "1"}), configMap(ns, "kept", map[string]string{"v": "1"}))}}))
	if !c.Drift().Tracked("drift-interval") {
		t.Fatal("profile not tracked")
	}
	// metadataOnly runs a check that must find nothing to correct with a
	// metadata LIST of Namespaces and one of ConfigMaps, and nothing else.
	metadataOnly := func(when string) {
		t.Helper()
		counter.reset()
		whole.Store(0)
		if events, err := c.DriftCheck(t.Context()); err != nil || len(events) != 0 {
			t.Fatalf("DriftCheck %s: %v, %v", when, events, err)
		}
		if reqs := counter.reset(); counter.writes() != 0 || len(reqs) != 1 || reqs["GET"] != 2 || whole.Load() != 0 {
			t.Errorf("DriftCheck %s made %v (%d reading whole objects); want 2 GETs of metadata", when, reqs, whole.Load())
		}
	}
	// The apply left each object at a resourceVersion found in sync: the
	// first check compares none of them.
	metadataOnly("after the apply")
	mergePatch(t, k, getCM(t, k, ns, "edited"), `{"data":{"v":"changed"}}`)
	if err := k.Delete(t.Context(), getCM(t, k, ns, "deleted")); err != nil {
		t.Fatal(err)
	}
	testenv.HoldsFor(t, time.Second, "the edit until the drift check (no watch corrects it)", func() bool {
		return getCM(t, k, ns, "edited").Data["v"] == "changed"
	})

	events, err := c.DriftCheck(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := actionsByName(events); len(got) != 2 || got["edited"] != apply.ActionConfigured || got["deleted"] != apply.ActionCreated {
		t.Errorf("corrections %v; want edited configured and deleted created", got)
	}
	if getCM(t, k, ns, "edited").Data["v"] != "1" || getCM(t, k, ns, "deleted") == nil {
		t.Error("drifted objects not restored")
	}

	// The next check finds the corrected objects at new resourceVersions
	// and reads them once; from then on a converged check lists metadata.
	if events, err := c.DriftCheck(t.Context()); err != nil || len(events) != 0 {
		t.Fatalf("DriftCheck after the corrections: %v, %v", events, err)
	}
	metadataOnly("on a converged cluster")

	// A new render that changes one object: the others are still known in
	// sync where they were, the changed one where its apply left it.
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "drift-interval", RenderHash: "h2",
		SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "edited", map[string]string{"v": "2"}),
			configMap(ns, "deleted", map[string]string{"v": "1"}), configMap(ns, "kept", map[string]string{"v": "1"}))}}))
	metadataOnly("after a new render")
	if n := watches.Load(); n != 0 {
		t.Errorf("%d watch requests; want none", n)
	}
}
