package apply_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// A changed kubeconfig (a rotated token, or an address now pointing at
// another cluster) stops the drift watcher instead of moving it to the new
// client: the old desired state must not be applied to whatever the new
// client reaches before the reconciler has confirmed it (ResumeDrift). Once
// resumed, the watcher corrects drift through the new client as before.
func TestClientChangeHoldsDriftUntilResumed(t *testing.T) {
	ns := "drift-held"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	req := apply.Request{Profile: "held", RenderHash: "h1", SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps: []apply.Step{step("a", []*unstructured.Unstructured{namespace(ns), configMap(ns, "held", map[string]string{"v": "1"})}...)}}
	mustApplied(t, c.Apply(t.Context(), req))
	if w := c.Drift(); w == nil || !w.Tracked("held") {
		t.Fatal("no drift watcher tracks the profile")
	}
	kc := append(env.Cluster(mainCluster).Kubeconfig(), '\n') // another kubeconfig: a new client
	again, err := m.Cluster(mainCluster, kc)
	if err != nil || again != c {
		t.Fatalf("cluster handle %p (%v), want %p", again, err, c)
	}
	if c.Drift() != nil {
		t.Fatal("the drift watcher moved to the new client before the reconciler confirmed it")
	}
	c.ResumeDrift()
	w := c.Drift()
	if w == nil {
		t.Fatal("ResumeDrift started no watcher")
	}
	testenv.WaitFor(t, 10*time.Second, "the resumed watcher tracks the profile and synced", func() bool {
		return w.Tracked("held") && w.HasSynced()
	})
	mergePatch(t, k, getCM(t, k, ns, "held"), `{"data":{"v":"changed"}}`)
	testenv.WaitFor(t, 10*time.Second, "drift corrected through the new client", func() bool {
		return getCM(t, k, ns, "held").Data["v"] == "1"
	})
}
