package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func cm(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns}}}
}

func TestRequestValidate(t *testing.T) {
	cases := map[string]struct {
		req  Request
		want string
	}{
		"ok":          {Request{Profile: "p", Steps: []Step{{Addon: "a", Objects: []*unstructured.Unstructured{cm("n", "x")}}}}, ""},
		"bad profile": {Request{Profile: "P_1"}, "profile name"},
		"bad mode":    {Request{Profile: "p", SyncMode: "Sometimes"}, "unknown sync mode"},
		"bad addon":   {Request{Profile: "p", Steps: []Step{{Addon: "a b"}}}, "add-on name"},
		"listed":      {Request{Profile: "p", Listed: true, Inventory: &Inventory{Profile: "p"}}, ""},
		"other inventory": {Request{Profile: "p", Listed: true, Inventory: &Inventory{Profile: "q"}},
			`inventory of profile "q" handed to the apply of "p"`},
		"not listed": {Request{Profile: "p", Inventory: &Inventory{Profile: "p"}}, "listed false"},
		"incomplete": {Request{Profile: "p", Steps: []Step{{Addon: "a", Objects: []*unstructured.Unstructured{cm("n", "")}}}}, "no apiVersion, kind or name"},
		"rendered twice": {Request{Profile: "p", Steps: []Step{{Addon: "a", Objects: []*unstructured.Unstructured{cm("n", "x")}},
			{Addon: "b", Objects: []*unstructured.Unstructured{cm("n", "x")}}}}, "ConfigMap/n/x is rendered twice (add-ons a and b)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.req.validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestDeleteOrder(t *testing.T) {
	e := func(group, kind, name string) InventoryEntry {
		return InventoryEntry{ObjectRef: ObjectRef{Group: group, Kind: kind, Name: name}}
	}
	applied := []InventoryEntry{e("apiextensions.k8s.io", "CustomResourceDefinition", "crd"), e("", "Namespace", "ns"),
		e("", "ConfigMap", "cm"), e("example.com", "Widget", "w"), e("apps", "Deployment", "d")}
	var got []string
	for _, x := range deleteOrder(applied) {
		got = append(got, x.Name)
	}
	if strings.Join(got, ",") != "d,w,cm,ns,crd" {
		t.Errorf("delete order %v", got)
	}
}

func TestTierOf(t *testing.T) {
	for ann, want := range map[string]int{"": 100, "10": 10, "x": 100} {
		m := map[string]string{}
		if ann != "" {
			m[AnnotationTier] = ann
		}
		if got := tierOf(m); got != want {
			t.Errorf("tierOf(%q) = %d, want %d", ann, got, want)
		}
	}
}
