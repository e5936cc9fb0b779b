package apply_test

import (
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// TestOwnershipFromInventories: a label naming a profile whose inventory
// does not hold the object is drift, restored by the drift watcher
// (drift-detected profiles) or the next apply (others); a conflict is
// reported only when another profile's inventory holds the object.
func TestOwnershipFromInventories(t *testing.T) {
	ns := "owner-inv"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	watched := apply.Request{Profile: "watched", RenderHash: "h1", SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "watched", map[string]string{"v": "1"}))}}
	mustApplied(t, c.Apply(t.Context(), watched))
	for _, label := range []string{"monitoring", "nobody"} {
		mergePatch(t, k, getCM(t, k, ns, "watched"), `{"metadata":{"labels":{"regatta.dev/profile":"`+label+`"}}}`)
		testenv.WaitFor(t, 20*time.Second, "label "+label+" corrected", func() bool {
			return getCM(t, k, ns, "watched").Labels[apply.LabelProfile] == "watched"
		})
	}

	plain := apply.Request{Profile: "plain", RenderHash: "p1", Steps: []apply.Step{step("a", configMap(ns, "plain", nil))}}
	mustApplied(t, c.Apply(t.Context(), plain))
	mergePatch(t, k, getCM(t, k, ns, "plain"), `{"metadata":{"labels":{"regatta.dev/profile":"monitoring"}}}`)
	plain.RenderHash = "p2"
	res := c.Apply(t.Context(), plain)
	mustApplied(t, res)
	if ch, ok := actionOf(res, "ConfigMap", "plain"); !ok || !strings.Contains(ch.Message, "ownership label corrected: profile monitoring does not hold it") {
		t.Errorf("relabelled object: %+v", ch)
	}
	if l := getCM(t, k, ns, "plain").Labels[apply.LabelProfile]; l != "plain" {
		t.Errorf("label after apply: %q", l)
	}

	// Labels removed out of band: the object is still plain's, by its
	// inventory; another profile rendering it is in conflict with plain.
	mergePatch(t, k, getCM(t, k, ns, "plain"), `{"metadata":{"labels":{"regatta.dev/profile":null,"regatta.dev/addon":null}}}`)
	if _, err := c.Inventories(t.Context()); err != nil {
		t.Fatal(err)
	}
	res = c.Apply(t.Context(), apply.Request{Profile: "grabber", RenderHash: "g1", Steps: []apply.Step{step("a", configMap(ns, "plain", map[string]string{"v": "grab"}))}})
	if res.State != apply.StateConflict || !strings.Contains(res.Error, "owned by profile plain") {
		t.Errorf("grabber took an unlabelled object plain's inventory holds: %s %s", res.State, res.Error)
	}

	// A real conflict: profile watched's inventory holds the object.
	res = c.Apply(t.Context(), apply.Request{Profile: "rival", RenderHash: "r1", Steps: []apply.Step{step("a", configMap(ns, "watched", map[string]string{"v": "2"}))}})
	if res.State != apply.StateConflict || !strings.Contains(res.Error, "owned by profile watched") {
		t.Errorf("rival: %s %s, want a conflict with watched", res.State, res.Error)
	}
}
