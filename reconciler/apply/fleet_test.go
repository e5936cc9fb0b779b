package apply_test

import (
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

func inventoried(t *testing.T, c *apply.Cluster) []string {
	t.Helper()
	invs, err := c.Inventories(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, inv := range invs {
		out = append(out, inv.Profile)
	}
	return out
}

// TestFleetAdoptsLegacyInventories: inventories and objects written
// before fleet identities are this fleet's only for a fleet that adopts
// them (Legacy), which migrates them; another fleet neither sees nor
// touches them. Withdrawal counts only the objects it deleted.
func TestFleetAdoptsLegacyInventories(t *testing.T) {
	ns := "fleet-legacy"
	k := kube(t, mainCluster)
	legacy := target(t, newManager(t, testOptions()), mainCluster)
	objs := []apply.Step{step("base", namespace(ns), configMap(ns, "one", nil), configMap(ns, "two", nil), configMap(ns, "three", nil))}
	mustApplied(t, legacy.Apply(t.Context(), apply.Request{Profile: "legacy-a", RenderHash: "h1", Steps: objs}))

	otherOpts := testOptions()
	otherOpts.Fleet = apply.Fleet{ID: "other"}
	other := target(t, newManager(t, otherOpts), mainCluster)
	if slices.Contains(inventoried(t, other), "legacy-a") {
		t.Fatal("a fleet with its own identity lists an unlabelled inventory")
	}
	if res := other.Withdraw(t.Context(), "legacy-a", ""); res.State != apply.StateWithdrawn || res.Counts.Deleted != 0 {
		t.Fatalf("other fleet's withdraw: %+v", res)
	}
	res := other.Apply(t.Context(), apply.Request{Profile: "intruder", Tier: new(1), RenderHash: "x", Steps: []apply.Step{step("x", configMap(ns, "one", map[string]string{"by": "other"}))}})
	if res.State != apply.StateConflict || !strings.Contains(res.Error, "owned by profile legacy-a of a regatta without fleet identity") {
		t.Fatalf("other fleet took an unlabelled object (tier 1): %s %s", res.State, res.Error)
	}

	mainOpts := testOptions()
	mainOpts.Fleet = apply.Fleet{ID: "main", Legacy: true}
	adopter := target(t, newManager(t, mainOpts), mainCluster)
	if !slices.Contains(inventoried(t, adopter), "legacy-a") {
		t.Fatal("the adopting fleet does not list the legacy inventory")
	}
	if getCM(t, k, apply.InventoryNamespace, "regatta-inv-legacy-a") != nil {
		t.Error("legacy inventory ConfigMap not removed after adoption")
	}
	if cm := getCM(t, k, apply.InventoryNamespace, "regatta-inv-main.legacy-a"); cm == nil || cm.Labels[apply.LabelFleet] != "main" {
		t.Fatalf("adopted inventory: %v", cm)
	}
	mustApplied(t, adopter.Apply(t.Context(), apply.Request{Profile: "legacy-a", RenderHash: "h2", Steps: objs}))
	if l := getCM(t, k, ns, "one").Labels[apply.LabelFleet]; l != "main" {
		t.Errorf("object fleet label %q after the adopting fleet's apply", l)
	}
	if res := other.Withdraw(t.Context(), "legacy-a", ""); res.Counts.Deleted != 0 || getCM(t, k, ns, "two") == nil {
		t.Fatalf("other fleet withdrew main's objects: %+v", res)
	}

	// One object deleted out of band: withdrawal deletes 3 (namespace and
	// two ConfigMaps) and reports the gone one as skipped, not deleted.
	if err := k.Delete(t.Context(), getCM(t, k, ns, "three")); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	res = adopter.Withdraw(t.Context(), "legacy-a", spec.StopMatchingWithdrawPolicies)
	if res.State != apply.StateWithdrawn || res.Counts.Deleted != 3 || res.Counts.Skipped != 1 {
		t.Fatalf("withdraw: %s deleted %d skipped %d, want 3 and 1\n%s", res.State, res.Counts.Deleted, res.Counts.Skipped, changes(res))
	}
}
