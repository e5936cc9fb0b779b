package apply_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

func crd(kind, scope string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": kind + "s.scope.example.com"},
		"spec": map[string]any{
			"group": "scope.example.com", "scope": scope,
			"names": map[string]any{"kind": kind, "plural": kind + "s", "listKind": kind + "List", "singular": kind},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
}

func custom(kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scope.example.com/v1", "kind": kind, "metadata": map[string]any{"name": name},
	}}
	u.SetNamespace(ns)
	return u
}

// Objects of a namespaced custom kind without a namespace go into the
// step's Namespace (the Helm release namespace the renderer chose, or
// "default"); those of a cluster-scoped kind stay cluster-scoped, and an
// object's own namespace is kept.
func TestApplyPlacesObjectsInStepNamespace(t *testing.T) {
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "scope-crds", RenderHash: "h1",
		Steps: []apply.Step{step("crds", crd("local", "Namespaced"), crd("global", "Cluster"), namespace("placed"), namespace("own"))}}))

	st := step("app", custom("local", "", "placed-here"), custom("local", "own", "kept"), custom("global", "", "cluster-wide"))
	st.Namespace = "placed"
	res := c.Apply(t.Context(), apply.Request{Profile: "scope", RenderHash: "h1", Steps: []apply.Step{st}})
	mustApplied(t, res)
	local := schema.GroupVersionKind{Group: "scope.example.com", Version: "v1", Kind: "local"}
	global := schema.GroupVersionKind{Group: "scope.example.com", Version: "v1", Kind: "global"}
	if get(t, k, local, "placed", "placed-here") == nil {
		t.Errorf("the namespaced object without a namespace is not in the step's namespace:\n%s", changes(res))
	}
	if get(t, k, local, "own", "kept") == nil {
		t.Error("an object's own namespace was not kept")
	}
	if get(t, k, global, "", "cluster-wide") == nil {
		t.Error("the cluster-scoped object was not applied")
	}
	if ch, ok := actionOf(res, "global", "cluster-wide"); !ok || ch.Object.Namespace != "" {
		t.Errorf("cluster-scoped object reported as %+v", ch.Object)
	}
	if st.Objects[0].GetNamespace() != "" {
		t.Error("the request's object was changed")
	}

	// A second pass with the same objects changes nothing and prunes nothing.
	res = c.Apply(t.Context(), apply.Request{Profile: "scope", RenderHash: "h2", Steps: []apply.Step{st}})
	mustApplied(t, res)
	if res.Counts.Deleted != 0 || get(t, k, local, "placed", "placed-here") == nil {
		t.Errorf("second pass deleted something:\n%s", changes(res))
	}
}
