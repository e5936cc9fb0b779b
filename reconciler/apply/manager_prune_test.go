package apply_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// Removing an add-on and an object prunes them; an object annotated
// regatta.dev/prune: disabled is left and the result says so.
func TestPruneAfterRemoval(t *testing.T) {
	ns := "prune"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	res := c.Apply(t.Context(), apply.Request{Profile: "prune", RenderHash: "h1", Steps: []apply.Step{
		step("base", namespace(ns), configMap(ns, "keep", nil), configMap(ns, "drop", nil), configMap(ns, "pinned", nil)),
		step("extra", configMap(ns, "extra", nil)),
	}})
	mustApplied(t, res)
	pin := []byte(`{"metadata":{"annotations":{"regatta.dev/prune":"disabled"}}}`)
	if err := k.Patch(t.Context(), getCM(t, k, ns, "pinned"), client.RawPatch(types.MergePatchType, pin)); err != nil {
		t.Fatal(err)
	}

	res = c.Apply(t.Context(), apply.Request{Profile: "prune", RenderHash: "h2", Steps: []apply.Step{
		step("base", namespace(ns), configMap(ns, "keep", nil)),
	}})
	mustApplied(t, res)
	if res.Counts.Deleted != 2 || res.Counts.Skipped != 1 {
		t.Errorf("counts %+v; want 2 deleted, 1 skipped\n%s", res.Counts, changes(res))
	}
	for name, want := range map[string]bool{"keep": true, "drop": false, "extra": false, "pinned": true} {
		if got := getCM(t, k, ns, name) != nil; got != want {
			t.Errorf("ConfigMap %s exists: %v, want %v", name, got, want)
		}
	}
	if ch, _ := actionOf(res, "ConfigMap", "pinned"); ch.Action != apply.ActionSkipped || !strings.Contains(ch.Message, "regatta.dev/prune: disabled") {
		t.Errorf("pinned ConfigMap: %+v", ch)
	}
	inv, err := c.Inventory(t.Context(), "prune")
	if err != nil || inv == nil || len(inv.Objects) != 2 || !inv.Complete || inv.RenderHash != "h2" {
		t.Fatalf("inventory %+v, %v; want Namespace and keep, complete, h2", inv, err)
	}
}

// WithdrawPolicies deletes the objects and the inventory; LeavePolicies
// leaves the objects without ownership labels and deletes the inventory.
func TestWithdraw(t *testing.T) {
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	for _, behavior := range []string{spec.StopMatchingWithdrawPolicies, spec.StopMatchingLeavePolicies} {
		t.Run(behavior, func(t *testing.T) {
			ns, profile := "wd-"+strings.ToLower(behavior[:5]), "wd-"+strings.ToLower(behavior[:5])
			res := c.Apply(t.Context(), apply.Request{Profile: profile, RenderHash: "h1", StopMatchingBehavior: behavior,
				Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "cm", nil))}})
			mustApplied(t, res)
			res = c.Withdraw(t.Context(), profile, "") // the inventory remembers the behaviour
			if res.State != apply.StateWithdrawn {
				t.Fatalf("withdraw: %s", res)
			}
			cm := getCM(t, k, ns, "cm")
			if behavior == spec.StopMatchingWithdrawPolicies {
				if cm != nil || res.Counts.Deleted != 2 {
					t.Errorf("ConfigMap still there (%v) or counts %+v", cm != nil, res.Counts)
				}
			} else {
				if cm == nil {
					t.Fatal("LeavePolicies deleted the ConfigMap")
				}
				for _, l := range []string{apply.LabelProfile, apply.LabelAddon, apply.LabelCluster} {
					if _, ok := cm.Labels[l]; ok {
						t.Errorf("label %s left on the ConfigMap", l)
					}
				}
				if _, ok := cm.Annotations[apply.AnnotationTier]; ok {
					t.Error("tier annotation left on the ConfigMap")
				}
			}
			if inv, err := c.Inventory(t.Context(), profile); err != nil || inv != nil {
				t.Errorf("inventory after withdraw: %+v, %v", inv, err)
			}
		})
	}
}

// A new Manager (a restarted daemon) prunes from the inventory in the cluster.
func TestInventorySurvivesRestart(t *testing.T) {
	ns := "restart"
	k := kube(t, mainCluster)
	first := newManager(t, testOptions())
	mustApplied(t, target(t, first, mainCluster).Apply(t.Context(), apply.Request{Profile: "restart", RenderHash: "h1",
		Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "one", nil), configMap(ns, "two", nil))}}))
	first.Close()

	second := newManager(t, testOptions())
	c := target(t, second, mainCluster)
	invs, err := c.Inventories(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, inv := range invs {
		found = found || inv.Profile == "restart"
	}
	if !found {
		t.Fatalf("Inventories does not list profile restart: %d inventories", len(invs))
	}
	res := c.Apply(t.Context(), apply.Request{Profile: "restart", RenderHash: "h2",
		Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "one", nil))}})
	mustApplied(t, res)
	if getCM(t, k, ns, "two") != nil || res.Counts.Deleted != 1 || res.Counts.Unchanged != 2 {
		t.Errorf("after restart: two exists %v, counts %+v", getCM(t, k, ns, "two") != nil, res.Counts)
	}
}

// An object that fails to delete stays in the inventory, the pass fails, and
// a later pass deletes it once it can.
func TestPruneFailureKeepsInventoryEntry(t *testing.T) {
	ns := "prune-fail"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	policy := objects(t, "deny-delete-policy.yaml")
	for _, o := range policy {
		if err := k.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k.Delete(context.Background(), o) })
	}
	stuck := configMap(ns, "stuck", nil)
	stuck.SetLabels(map[string]string{"test.regatta.dev/undeletable": "true"})
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "prune-fail", RenderHash: "h1",
		Steps: []apply.Step{step("a", namespace(ns), stuck, configMap(ns, "gone", nil))}}))
	waitForPolicy(t, k, ns)

	res := c.Apply(t.Context(), apply.Request{Profile: "prune-fail", RenderHash: "h2",
		Steps: []apply.Step{step("a", namespace(ns))}})
	if res.State != apply.StateFailed || !strings.Contains(res.Error, "ConfigMap/prune-fail/stuck delete failed") {
		t.Fatalf("%s", res)
	}
	inv, _ := c.Inventory(t.Context(), "prune-fail")
	if len(inv.Objects) != 2 || inv.Objects[0].Name != "stuck" || inv.Complete || getCM(t, k, ns, "gone") != nil {
		t.Fatalf("inventory %+v", inv)
	}

	mergePatch(t, k, getCM(t, k, ns, "stuck"), `{"metadata":{"labels":{"test.regatta.dev/undeletable":null}}}`)
	res = c.Apply(t.Context(), apply.Request{Profile: "prune-fail", RenderHash: "h2",
		Steps: []apply.Step{step("a", namespace(ns))}})
	mustApplied(t, res)
	if getCM(t, k, ns, "stuck") != nil || res.Counts.Deleted != 1 {
		t.Errorf("retry did not delete: %s", res)
	}
}

// waitForPolicy waits until the deny-delete policy is enforced.
func waitForPolicy(t *testing.T, k client.Client, ns string) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, "the deny-delete policy to be enforced", func() bool {
		probe := configMap(ns, "probe", nil)
		probe.SetLabels(map[string]string{"test.regatta.dev/undeletable": "true"})
		if err := k.Create(t.Context(), probe); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		return k.Delete(t.Context(), probe) != nil
	})
}
