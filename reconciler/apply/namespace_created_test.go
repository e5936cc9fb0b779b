package apply_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

var nsGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// createdNamespace is the step helm.createNamespace renders: a Namespace
// marked as created, before the chart.
func createdNamespace(addon, name string) apply.Step {
	ns := namespace(name)
	ns.SetAnnotations(map[string]string{spec.AnnotationCreatedNamespace: "true"})
	return apply.Step{Addon: addon, Phase: apply.PhaseNamespace, Objects: []*unstructured.Unstructured{ns}}
}

// chartRequest is a profile whose chart goes into a namespace it creates.
func chartRequest(profile, ns, hash string) apply.Request {
	return apply.Request{Profile: profile, RenderHash: hash, Steps: []apply.Step{
		createdNamespace("chart", ns), step("chart", configMap(ns, "settings", map[string]string{"a": "1"})),
	}}
}

// deleting reports whether a namespace is gone or being deleted (no
// namespace controller runs on the test clusters to finish it).
func deleting(t *testing.T, c client.Client, name string) bool {
	t.Helper()
	ns := get(t, c, nsGVK, "", name)
	return ns == nil || ns.GetDeletionTimestamp() != nil
}

func createLive(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// TestCreatedNamespaceLifecycle: a created namespace is made before the
// chart's objects, with regatta's ownership labels; later passes keep it;
// once the render drops it, prune deletes it when nothing else is in it.
func TestCreatedNamespaceLifecycle(t *testing.T) {
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	res := c.Apply(t.Context(), chartRequest("cns-life", "cns-life", "h1"))
	mustApplied(t, res)
	ns := get(t, k, nsGVK, "", "cns-life")
	if ns == nil {
		t.Fatalf("namespace not created:\n%s", changes(res))
	}
	l := ns.GetLabels()
	if l[apply.LabelProfile] != "cns-life" || l[apply.LabelAddon] != "chart" || l[apply.LabelCluster] != mainCluster {
		t.Errorf("namespace labels %v", l)
	}
	if ch, _ := actionOf(res, "Namespace", "cns-life"); ch.Action != apply.ActionCreated {
		t.Errorf("namespace %s", ch.Action)
	}
	mustApplied(t, c.Apply(t.Context(), chartRequest("cns-life", "cns-life", "h2")))
	if deleting(t, k, "cns-life") {
		t.Fatal("a second pass deleted the namespace")
	}
	res = c.Apply(t.Context(), apply.Request{Profile: "cns-life", RenderHash: "h3", Steps: []apply.Step{
		step("other", configMap("default", "cns-life-other", nil)),
	}})
	mustApplied(t, res)
	if !deleting(t, k, "cns-life") {
		t.Errorf("the empty namespace regatta created was not pruned:\n%s", changes(res))
	}
}

// TestCreatedNamespaceNeverAdopted: a namespace that existed before is
// left as it is (no labels), out of the inventory, and neither prune nor
// withdrawal deletes it; the chart's objects still go into it. A dry run
// (regatta plan --live) reports it as skipped.
func TestCreatedNamespaceNeverAdopted(t *testing.T) {
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	createLive(t, k, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cns-pre", Labels: map[string]string{"team": "a"}}})
	dry := chartRequest("cns-pre-dry", "cns-pre", "h0")
	dry.SyncMode = spec.SyncModeDryRun // what `regatta plan --live` asks
	res := c.Apply(t.Context(), dry)
	if ch, _ := actionOf(res, "Namespace", "cns-pre"); res.State != apply.StateDryRun || ch.Action != apply.ActionSkipped {
		t.Errorf("dry run: state %s, namespace change %+v", res.State, ch)
	}
	res = c.Apply(t.Context(), chartRequest("cns-pre", "cns-pre", "h1"))
	mustApplied(t, res)
	if ch, _ := actionOf(res, "Namespace", "cns-pre"); ch.Action != apply.ActionSkipped || !strings.Contains(ch.Message, "never adopts") {
		t.Errorf("namespace change %+v", ch)
	}
	ns := get(t, k, nsGVK, "", "cns-pre")
	if _, labelled := ns.GetLabels()[apply.LabelProfile]; labelled {
		t.Errorf("the existing namespace was labelled: %v", ns.GetLabels())
	}
	if getCM(t, k, "cns-pre", "settings") == nil {
		t.Error("the chart's object is not in the existing namespace")
	}
	inv, err := c.Inventory(t.Context(), "cns-pre")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range inv.Objects {
		if e.Kind == "Namespace" {
			t.Errorf("the existing namespace is in the inventory: %+v", e)
		}
	}
	if res := c.Withdraw(t.Context(), "cns-pre", ""); res.State != apply.StateWithdrawn {
		t.Fatalf("withdraw %s: %v", res.State, res.Err)
	}
	if deleting(t, k, "cns-pre") {
		t.Error("withdrawal deleted a namespace regatta did not create")
	}
}

// TestCreatedNamespaceKeptWithData: withdrawal leaves a namespace regatta
// created in place, with a message naming what it holds, when objects
// regatta did not apply are in it; annotated prune-contents: enabled it
// is deleted with them. Objects another object owns do not count.
func TestCreatedNamespaceKeptWithData(t *testing.T) {
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	for _, name := range []string{"cns-data", "cns-optin"} {
		mustApplied(t, c.Apply(t.Context(), chartRequest(name, name, "h1")))
		owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: name}}
		createLive(t, k, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: name}})
		owned := getCM(t, k, name, "settings")
		owner.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "settings", UID: owned.UID}}
		createLive(t, k, owner)
	}
	res := c.Withdraw(t.Context(), "cns-data", "")
	if res.State != apply.StateWithdrawn {
		t.Fatalf("withdraw %s: %v", res.State, res.Err)
	}
	if deleting(t, k, "cns-data") {
		t.Fatal("a namespace holding a Secret regatta did not apply was deleted")
	}
	ch, _ := actionOf(res, "Namespace", "cns-data")
	if ch.Action != apply.ActionSkipped || !strings.HasPrefix(ch.Message, apply.MsgKeptNotEmpty) ||
		!strings.Contains(ch.Message, "[Secret/data]") || !strings.Contains(ch.Message, spec.AnnotationPruneContents) {
		t.Errorf("namespace change %+v", ch)
	}
	ns := &corev1.Namespace{}
	if err := k.Get(t.Context(), client.ObjectKey{Name: "cns-optin"}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Annotations[spec.AnnotationPruneContents] = spec.PruneContentsEnabled
	if err := k.Update(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	if res := c.Withdraw(t.Context(), "cns-optin", ""); res.State != apply.StateWithdrawn {
		t.Fatalf("withdraw %s: %v", res.State, res.Err)
	}
	if !deleting(t, k, "cns-optin") {
		t.Error("the namespace annotated prune-contents: enabled was not deleted")
	}
}
