package reconciler

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClassifierMovesClusterOnUpgrade is the scenario classifiers exist
// for: a cluster upgraded from 1.36 to 1.37 switches to the add-on of its
// new version on the next pass, with no commit, and the old one is withdrawn.
func TestClassifierMovesClusterOnUpgrade(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	files := baseFleet(t, "e2e-classify")
	f.Commit("fleet", files)
	h := newHarness(t, f, func(o *DaemonOptions) { o.StatusBranch = "" })
	if _, err := h.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if configMap(t, "c36", "default", "engine-v1-36") == nil || configMap(t, "c36", "default", "engine-v1-37") != nil {
		t.Fatal("c36 did not get the v1.36 add-on")
	}
	c36 := env.Cluster("c36")
	c36.Stop()
	if err := c36.Start(ctx, "v1.37.2"); err != nil {
		t.Fatal(err)
	}
	defer func() {
		c36.Stop()
		if err := c36.Start(context.Background(), "v1.36.3"); err != nil {
			t.Fatal(err)
		}
	}()
	res, err := h.d.RunOnce(ctx)
	if err != nil {
		t.Fatalf("%v: %+v", err, res.Snapshot.Clusters)
	}
	if configMap(t, "c36", "default", "engine-v1-37") == nil {
		t.Error("c36 upgraded to 1.37 did not get the v1.37 add-on")
	}
	if configMap(t, "c36", "default", "engine-v1-36") != nil {
		t.Error("the v1.36 add-on was not withdrawn after the upgrade")
	}
	for _, c := range res.Snapshot.Clusters {
		if c.Cluster == "c36" && c.Labels["kubernetes"] != "v1-37" {
			t.Errorf("c36 labels after upgrade: %v", c.Labels)
		}
	}
}

// TestLuaClassifierCountsReadyNodes labels a cluster size=large once it has
// five Ready Nodes, through an aggregated Lua classification.
func TestLuaClassifierCountsReadyNodes(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{
		"classifiers/large.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Classifier
metadata: {name: large}
spec:
  classifierLabels: {size: large}
  deployedResourceConstraint:
    resourceSelectors:
    - {group: "", version: v1, kind: Node}
    aggregatedClassification: |
      function evaluate()
        local ready = 0
        for _, node in ipairs(resources) do
          for _, c in ipairs(node.status.conditions or {}) do
            if c.type == "Ready" and c.status == "True" then ready = ready + 1 end
          end
        end
        return {matching = ready >= 5, message = ready .. " ready nodes"}
      end
`,
		"profiles/big-cluster-tuning.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: big-cluster-tuning}\nspec:\n  clusterSelector: {matchLabels: {size: large}}\n  addons:\n  - name: tuning\n    manifests: {path: tuning}\n",
		"tuning/cm.yaml":                   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: large-cluster-tuning, namespace: default}\ndata: {workers: \"64\"}\n",
	}
	_, h := oneClusterFleet(t, files)
	nodes := clientset(t, "c37").CoreV1().Nodes()
	for i := 0; i < 5; i++ {
		if _, err := h.d.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if got := configMap(t, "c37", "default", "large-cluster-tuning"); got != nil {
			t.Fatalf("labelled large with %d ready nodes", i)
		}
		name := fmt.Sprintf("lua-node-%d", i)
		n, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nodes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		if _, err := nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if configMap(t, "c37", "default", "large-cluster-tuning") == nil {
		t.Error("five ready nodes did not make the cluster large")
	}
}
