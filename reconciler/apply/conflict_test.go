package apply_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// Tiers: an equal tier leaves the object with its owner and reports
// Conflict; a lower tier takes it over without re-creating it, and the old
// owner's prune leaves it alone.
func TestTierConflict(t *testing.T) {
	ns := "tiers"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	shared := func(v string) apply.Step { return step("shared", configMap(ns, "shared", map[string]string{"by": v})) }
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "tier-first", RenderHash: "h1",
		Steps: []apply.Step{step("ns", namespace(ns)), shared("first")}}))
	uid := getCM(t, k, ns, "shared").UID

	res := c.Apply(t.Context(), apply.Request{Profile: "tier-equal", RenderHash: "h1",
		Steps: []apply.Step{shared("equal"), step("own", configMap(ns, "own", nil))}})
	var ce *apply.ConflictError
	if res.State != apply.StateConflict || len(res.Conflicts) != 1 || res.Conflicts[0].Owner != "tier-first" ||
		!errors.As(res.Err, &ce) || !strings.Contains(res.Error, "ConfigMap/tiers/shared is owned by profile tier-first") {
		t.Fatalf("equal tier: %s\nconflicts %+v", res, res.Conflicts)
	}
	if cm := getCM(t, k, ns, "shared"); cm.Data["by"] != "first" || getCM(t, k, ns, "own") == nil {
		t.Fatalf("equal tier changed the shared object (%v) or skipped its own", cm.Data)
	}

	res = c.Apply(t.Context(), apply.Request{Profile: "tier-low", Tier: new(10), RenderHash: "h1", Steps: []apply.Step{shared("low")}})
	mustApplied(t, res)
	cm := getCM(t, k, ns, "shared")
	if cm.UID != uid || cm.Data["by"] != "low" || cm.Labels[apply.LabelProfile] != "tier-low" || cm.Annotations[apply.AnnotationTier] != "10" {
		t.Fatalf("takeover: uid changed %v, data %v, labels %v, annotations %v", cm.UID != uid, cm.Data, cm.Labels, cm.Annotations)
	}

	res = c.Apply(t.Context(), apply.Request{Profile: "tier-first", RenderHash: "h2", Steps: []apply.Step{step("ns", namespace(ns))}})
	mustApplied(t, res)
	if cm := getCM(t, k, ns, "shared"); cm == nil || cm.UID != uid {
		t.Fatal("the old owner's prune deleted the object taken over")
	}
	res = c.Apply(t.Context(), apply.Request{Profile: "tier-first", RenderHash: "h3", Steps: []apply.Step{step("ns", namespace(ns)), shared("first")}})
	if res.State != apply.StateConflict || res.Conflicts[0].Owner != "tier-low" || res.Conflicts[0].OwnerTier != 10 {
		t.Errorf("old owner re-rendering the object: %s %+v", res, res.Conflicts)
	}

	// Namespaces are owned too, whether a step has a few (read one by one)
	// or many (listed).
	for _, extra := range []int{0, 5} {
		objs := []*unstructured.Unstructured{namespace(ns)}
		for i := range extra {
			objs = append(objs, namespace(fmt.Sprintf("tiers-extra-%d", i)))
		}
		profile := fmt.Sprintf("tier-ns-%d", extra)
		res = c.Apply(t.Context(), apply.Request{Profile: profile, RenderHash: "h1", Steps: []apply.Step{step("ns", objs...)}})
		if res.State != apply.StateConflict || len(res.Conflicts) != 1 || res.Conflicts[0].Owner != "tier-first" ||
			res.Conflicts[0].Object.Kind != "Namespace" {
			t.Errorf("%d other namespaces: %s %+v", extra, res, res.Conflicts)
		}
		if res := c.Withdraw(t.Context(), profile, spec.StopMatchingLeavePolicies); res.State != apply.StateWithdrawn {
			t.Fatal(res)
		}
	}
}

// A profile of tier 0 (the highest) takes over from tier 10, and a Conflict
// between two tier-0 profiles names tier 0 on both sides: 0 is a tier,
// not "unset" (it was taken for spec.DefaultTier, 100).
func TestTierZero(t *testing.T) {
	ns := "tier-zero"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	shared := func(v string) apply.Step { return step("shared", configMap(ns, "shared", map[string]string{"by": v})) }
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "zero-ten", Tier: new(10), RenderHash: "h1",
		Steps: []apply.Step{step("ns", namespace(ns)), shared("ten")}}))

	res := c.Apply(t.Context(), apply.Request{Profile: "zero-a", Tier: new(0), RenderHash: "h1", Steps: []apply.Step{shared("zero")}})
	mustApplied(t, res)
	if cm := getCM(t, k, ns, "shared"); cm.Data["by"] != "zero" || cm.Annotations[apply.AnnotationTier] != "0" {
		t.Fatalf("tier 0 did not take over from tier 10: data %v, annotations %v", cm.Data, cm.Annotations)
	}

	res = c.Apply(t.Context(), apply.Request{Profile: "zero-b", Tier: new(0), RenderHash: "h1", Steps: []apply.Step{shared("b")}})
	var ce *apply.ConflictError
	if res.State != apply.StateConflict || !errors.As(res.Err, &ce) || ce.Tier != 0 || ce.OwnerTier != 0 ||
		!strings.Contains(res.Error, "owned by profile zero-a (tier 0); this profile's tier 0 does not take it over") {
		t.Fatalf("equal tier 0: %s\nconflicts %+v", res, res.Conflicts)
	}
}
