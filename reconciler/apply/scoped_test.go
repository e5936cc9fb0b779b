package apply_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// A namespace-scoped cluster (SetNamespaces) whose token RBAC limits to two
// namespaces: the apply keeps its inventory and registration in the first,
// its drift watches list and watch each namespace (they sync, and correct
// drift), the drift check lists them without error, and the inventories
// are listed there; a cluster-wide list or watch would be Forbidden.
func TestNamespaceScopedCluster(t *testing.T) {
	nss := []string{"scoped-one", "scoped-two"}
	kc, err := env.Cluster(mainCluster).NamespaceUser(t.Context(), "scoped-user", nss, "")
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, testOptions())
	c, err := m.Cluster("scoped", kc)
	if err != nil {
		t.Fatal(err)
	}
	c.SetNamespaces(nss)
	k := kube(t, mainCluster)
	req := apply.Request{Profile: "scoped", RenderHash: "h1", SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps: []apply.Step{step("a", []*unstructured.Unstructured{
			configMap(nss[0], "in-one", map[string]string{"v": "1"}), configMap(nss[1], "in-two", map[string]string{"v": "1"})}...)}}
	mustApplied(t, c.Apply(t.Context(), req))
	if getCM(t, k, nss[0], apply.InventoryName("scoped")) == nil || getCM(t, k, apply.InventoryNamespace, apply.InventoryName("scoped")) != nil {
		t.Fatal("the inventory is not in the cluster's first namespace")
	}
	regs, err := c.Registrations(t.Context())
	if err != nil || len(regs) != 2 || regs[0].Namespace != nss[0] || regs[1].Namespace != nss[1] {
		t.Fatalf("registrations %+v, %v: want one per namespace", regs, err)
	}
	for _, reg := range regs {
		if err := c.Register(t.Context(), reg); err != nil {
			t.Fatalf("register in %s: %v", reg.Namespace, err)
		}
	}
	if regs, _ = c.Registrations(t.Context()); regs[1].Entry != "scoped" {
		t.Fatalf("registration %+v, want entry scoped", regs[1])
	}
	testenv.WaitFor(t, 10*time.Second, "the namespaced drift watches synced", func() bool {
		return c.Drift() != nil && c.Drift().HasSynced()
	})
	mergePatch(t, k, getCM(t, k, nss[1], "in-two"), `{"data":{"v":"changed"}}`)
	testenv.WaitFor(t, 10*time.Second, "drift in the second namespace corrected", func() bool {
		return getCM(t, k, nss[1], "in-two").Data["v"] == "1"
	})
	if _, err := c.DriftCheck(t.Context()); err != nil {
		t.Errorf("drift check: %v", err)
	}
	invs, err := c.Inventories(t.Context())
	if err != nil || len(invs) != 1 || invs[0].Profile != "scoped" {
		t.Errorf("inventories %v, %v", invs, err)
	}
}
