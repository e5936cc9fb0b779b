package apply

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The informers keep a tracked object without status and managedFields,
// as JSON beside its identity, and any other object as a stub that cached
// never returns.
func TestSlim(t *testing.T) {
	live := func(name string) *unstructured.Unstructured {
		u := deployment(2, "app:1", map[string]any{LabelProfile: "p"})
		u.SetName(name)
		u.SetResourceVersion("7")
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: FieldManager}})
		u.SetAnnotations(map[string]string{"a": "b"})
		u.Object["status"] = map[string]any{"replicas": int64(2)}
		return u
	}
	tracked := live("tracked")
	dp, err := newDriftProfile([]*unstructured.Unstructured{tracked}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &DriftWatcher{profiles: map[string]*driftProfile{"p": dp}}

	got, err := w.slim(live("tracked"))
	if err != nil {
		t.Fatal(err)
	}
	so, ok := got.(*slimObject)
	if !ok {
		t.Fatalf("tracked object cached as %T", got)
	}
	if again, _ := w.slim(so); again != so {
		t.Errorf("slim of a slim object returned %#v", again)
	}
	if ref, ok := eventRef(so); !ok || ref != (ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "tracked"}) {
		t.Errorf("eventRef(slim object) = %v, %v", ref, ok)
	}
	u, err := so.object()
	if err != nil {
		t.Fatal(err)
	}
	if u.Object["status"] != nil || u.GetManagedFields() != nil || u.GetLabels()[LabelProfile] != "p" ||
		u.GetAnnotations()["a"] != "b" || u.GetResourceVersion() != "7" || differs(deployment(2, "app:1", nil), u, nil) {
		t.Errorf("tracked object cached as %v", u.Object)
	}

	got, err = w.slim(live("other"))
	if err != nil {
		t.Fatal(err)
	}
	stub, ok := got.(*metav1.PartialObjectMetadata)
	if !ok || stub.Name != "other" || stub.Namespace != "ns" || stub.Kind != "Deployment" || len(stub.Labels) != 0 {
		t.Fatalf("untracked object cached as %#v", got)
	}
	if again, _ := w.slim(stub); again != stub {
		t.Errorf("slim of a stub returned %#v", again)
	}
	if ref, ok := eventRef(stub); !ok || ref != (ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "other"}) {
		t.Errorf("eventRef(stub) = %v, %v", ref, ok)
	}
}
