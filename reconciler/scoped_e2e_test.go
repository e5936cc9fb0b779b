package reconciler

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// scopedEntry is the folder of a namespace-scoped entry on c36 reached
// through host with a ServiceAccount token whose RBAC reaches only
// namespaces.
func scopedEntry(t *testing.T, name, host string, namespaces ...string) map[string]string {
	t.Helper()
	kc, err := env.Cluster("c36").NamespaceUser(context.Background(), name, namespaces, host)
	if err != nil {
		t.Fatal(err)
	}
	checkNamespaceLimited(t, kc, namespaces[0])
	return entryFiles(t, name, "scoped: \"yes\", entry: "+name, kc, "  namespaces: ["+strings.Join(namespaces, ", ")+"]\n")
}

// checkNamespaceLimited makes sure the credentials of kc read namespace ns
// and nothing cluster-wide: not every namespace's ConfigMaps, not the
// kube-system Namespace (the identity of a whole-cluster entry).
func checkNamespaceLimited(t *testing.T, kc []byte, ns string) {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("namespace user cannot list its own namespace %s: %v", ns, err)
	}
	if _, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("namespace user lists ConfigMaps across namespaces: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("namespace user reads Namespace kube-system: %v", err)
	}
}

const scopedClassifiers = `apiVersion: regatta.dev/v1alpha1
kind: Classifier
metadata: {name: sc-configmaps}
spec:
  classifierLabels: {sc-configmaps: listed}
  deployedResourceConstraint:
    resourceSelectors:
    - {group: "", version: v1, kind: ConfigMap}
    aggregatedClassification: |
      function evaluate()
        return {matching = #resources >= 0, message = ""}
      end
`

const scopedNodesClassifier = `apiVersion: regatta.dev/v1alpha1
kind: Classifier
metadata: {name: sc-nodes}
spec:
  classifierLabels: {sc-nodes: listed}
  deployedResourceConstraint:
    resourceSelectors:
    - {group: "", version: v1, kind: Node}
`

// TestNamespaceScopedEntriesShareOneServer: two namespace-scoped entries
// (spec.namespaces) reach c36 through addresses of their own, with tokens
// RBAC limits to their namespaces. Each applies its profiles (one with
// drift detection, templated into the entry's namespace) and keeps its
// inventories and registration in its first namespace; no request needs
// more than the entry's namespaces (a cluster-wide list or watch would be
// refused: drift watches that never sync, failed classifiers, failed
// inventories). A profile rendering a ClusterRole and a ConfigMap of
// another namespace for one of them is refused with its file and line,
// nothing of it applied. Nothing is ever deleted, and drift in a scoped
// namespace is corrected by the entry's namespaced watch.
func TestNamespaceScopedEntriesShareOneServer(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	files := map[string]string{
		"classifiers/sc-configmaps.yaml": scopedClassifiers,
		"classifiers/sc-nodes.yaml":      scopedNodesClassifier,
		"profiles/sc-app.yaml": profileYAML("sc-app", "scoped: \"yes\"",
			"  syncMode: ContinuousWithDriftDetection\n  addons:\n  - name: cm\n    template: true\n    manifests: {path: sc-app}\n"),
		"sc-app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sc-app, namespace: \"ns-{{ .Cluster.Name }}\"}\ndata: {v: \"1\"}\n",
		"profiles/sc-extra.yaml": profileYAML("sc-extra", "entry: sc-b",
			"  addons:\n  - name: cm\n    manifests: {path: sc-extra}\n"),
		"sc-extra/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sc-extra, namespace: ns-sc-b2}\ndata: {v: \"1\"}\n",
		"events/sc-events.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: sc-events}\nspec:\n" +
			"  resourceSelectors:\n  - version: v1\n    kind: ConfigMap\n    labelFilters: [{key: sc-event, operation: Equal, value: \"yes\"}]\n",
		"profiles/sc-copy.yaml": profileYAML("sc-copy", "scoped: \"yes\"",
			"  eventTrigger: {eventSourceName: sc-events, oneForEvent: true}\n  addons:\n  - name: cm\n    template: true\n    manifests: {path: sc-copy}\n"),
		"sc-copy/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"copy-{{ .Event.Resource.metadata.name }}\"\n" +
			"  namespace: \"{{ .Event.Resource.metadata.namespace }}\"\ndata: {from: \"{{ .Cluster.Name }}\"}\n",
		"profiles/sc-bad.yaml": profileYAML("sc-bad", "entry: sc-a",
			"  addons:\n  - name: bad\n    manifests: {path: sc-bad}\n"),
		"sc-bad/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sc-bad, namespace: ns-sc-a}\n---\n" +
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: sc-bad}\nrules: []\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sc-bad, namespace: ns-sc-b}\n",
	}
	for _, m := range []map[string]string{
		scopedEntry(t, "sc-a", "127.0.0.6", "ns-sc-a"),
		scopedEntry(t, "sc-b", "127.0.0.7", "ns-sc-b", "ns-sc-b2"),
	} {
		for k, v := range m {
			files[k] = v
		}
	}
	f.Commit("two namespace-scoped entries", files)
	// An event in sc-a's namespace: only sc-a's namespaced watch sees it.
	src := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "src", Namespace: "ns-sc-a", Labels: map[string]string{"sc-event": "yes"}}}
	if _, err := clientset(t, "c36").CoreV1().ConfigMaps("ns-sc-a").Create(ctx, src, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	deletes := deleteCounter{fleet: "scoped"}
	h := newHarnessWith(t, f, nil, deletes.wrap)
	res, _ := h.d.RunOnce(ctx)
	for cluster, want := range map[string][]string{"sc-a": {"sc-app", "sc-copy"}, "sc-b": {"sc-app", "sc-extra", "sc-copy"}} {
		for _, prof := range want {
			if p := pairs(res, cluster)[prof]; p.State != status.StateApplied {
				t.Errorf("%s: %s %s %v, want Applied", cluster, prof, p.State, p.Error)
			}
		}
		c := clusterRecord(res, cluster)
		if c.ClassifierLabels["sc-configmaps"]["sc-configmaps"] != "listed" {
			t.Errorf("%s: classifier sc-configmaps did not list the entry's ConfigMaps: %+v", cluster, c.ClassifierErrors)
		}
		if len(c.ClassifierErrors) != 1 || !strings.Contains(c.ClassifierErrors[0].Message, "may not receive cluster-scoped kind Node") {
			t.Errorf("%s: classifier errors %+v, want sc-nodes refused (cluster-scoped kind)", cluster, c.ClassifierErrors)
		}
	}
	if got := configMap(t, "c36", "ns-sc-a", "copy-src")["from"]; got != "sc-a" {
		t.Errorf("the event instance of sc-a: copy-src from %q, want sc-a", got)
	}
	if n := len(pairs(res, "sc-b")["sc-copy"].EventInstances); n != 0 {
		t.Errorf("sc-b saw %d events outside its namespaces", n)
	}
	bad := pairs(res, "sc-a")["sc-bad"]
	if bad.State != status.StateFailed || bad.Error == nil || bad.Error.File != "sc-bad/bad.yaml" || bad.Error.Line != 5 ||
		!strings.Contains(bad.Error.Message, "ClusterRole/sc-bad: cluster sc-a is namespace-scoped") ||
		!strings.Contains(bad.Error.Message, "ConfigMap/ns-sc-b/sc-bad: namespace ns-sc-b is not one of cluster sc-a's namespaces") {
		t.Errorf("sc-bad on sc-a: %s %+v, want refused at sc-bad/bad.yaml:5", bad.State, bad.Error)
	}
	cs := clientset(t, "c36")
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, "sc-bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRole sc-bad: %v, want not found", err)
	}
	for _, c := range []struct{ ns, name string }{{"ns-sc-a", "sc-bad"}, {"ns-sc-b", "sc-bad"}} {
		if uidOf(t, c.ns, c.name) != "" {
			t.Errorf("ConfigMap %s/%s of the refused profile was applied", c.ns, c.name)
		}
	}
	for _, c := range []struct{ ns, name string }{
		{"ns-sc-a", "regatta-inv-scoped.sc-app"}, {"ns-sc-b", "regatta-inv-scoped.sc-app"}, {"ns-sc-b", "regatta-inv-scoped.sc-extra"},
		{"ns-sc-a", "regatta-cluster.scoped"}, {"ns-sc-b", "regatta-cluster.scoped"}, {"ns-sc-b2", "regatta-cluster.scoped"},
	} {
		if uidOf(t, c.ns, c.name) == "" {
			t.Errorf("ConfigMap %s/%s missing: inventories and registrations live in the entry's namespaces", c.ns, c.name)
		}
	}
	uids := map[string]types.UID{}
	for _, ns := range []string{"ns-sc-a", "ns-sc-b"} {
		uids[ns] = uidOf(t, ns, "sc-app")
	}
	// Drift in one entry's namespace is corrected by its namespaced watch.
	if _, err := cs.CoreV1().ConfigMaps("ns-sc-a").Patch(ctx, "sc-app", types.MergePatchType,
		[]byte(`{"data":{"v":"drifted"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "the drift of ns-sc-a/sc-app corrected", func() bool {
		return configMap(t, "c36", "ns-sc-a", "sc-app")["v"] == "1"
	})
	res, _ = h.d.RunOnce(ctx)
	for _, ns := range []string{"ns-sc-a", "ns-sc-b"} {
		if got := uidOf(t, ns, "sc-app"); got != uids[ns] {
			t.Errorf("%s/sc-app deleted and created again (%s -> %s)", ns, uids[ns], got)
		}
	}
	if p := pairs(res, "sc-b")["sc-extra"]; p.State != status.StateApplied {
		t.Errorf("second pass: sc-b's sc-extra %s %v (withdrawn by the other entry?)", p.State, p.Error)
	}
	if n := deletes.total(); n > 0 {
		t.Errorf("%d DELETE requests (%v)", n, deletes.n)
	}
	// sc-extra stops selecting sc-b: withdrawn inside sc-b's namespaces
	// only (its object and its inventory), sc-a untouched.
	f.Commit("sc-extra selects no cluster", map[string]string{"profiles/sc-extra.yaml": profileYAML("sc-extra", "entry: none",
		"  addons:\n  - name: cm\n    manifests: {path: sc-extra}\n")})
	res, _ = h.d.RunOnce(ctx)
	// Withdrawn, or no longer listed when sc-b was queued again in the same
	// run (a later pass does not name a pair it withdrew before); either
	// way its object and inventory must be gone, checked below.
	if p, ok := pairs(res, "sc-b")["sc-extra"]; ok && p.State != status.StateWithdrawn {
		t.Errorf("sc-b: sc-extra %s %v, want Withdrawn", p.State, p.Error)
	}
	if uidOf(t, "ns-sc-b2", "sc-extra") != "" || uidOf(t, "ns-sc-b", "regatta-inv-scoped.sc-extra") != "" {
		t.Error("sc-extra's object or inventory left after the withdrawal")
	}
	if got := uidOf(t, "ns-sc-a", "sc-app"); got != uids["ns-sc-a"] {
		t.Errorf("sc-a's object changed by sc-b's withdrawal (%s -> %s)", uids["ns-sc-a"], got)
	}
	deletes.mu.Lock()
	defer deletes.mu.Unlock()
	if deletes.n["sc-a"] != 0 || deletes.n["sc-b"] != 2 {
		t.Errorf("DELETE requests %v, want sc-b's object and inventory only", deletes.n)
	}
}
