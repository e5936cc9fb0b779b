package bench

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestBookkeepingInventories(t *testing.T) {
	obj := func(kind, ns, name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("v1")
		o.SetKind(kind)
		o.SetNamespace(ns)
		o.SetName(name)
		return o
	}
	objs := []*unstructured.Unstructured{obj("Namespace", "", "fl-p00"), obj("ConfigMap", "fl-p00", "a"),
		obj("Namespace", "", "fl-p01"), obj("ConfigMap", "fl-p01", "b"), obj("Secret", "fl-p01", "c")}
	var b Bookkeeping
	for _, complete := range []bool{false, true} {
		invs := b.inventories(objs, complete)
		if len(invs) != 2 || invs[0].GetName() != "regattx-inv-fl-p00" || invs[1].GetNamespace() != floorNamespace {
			t.Fatalf("inventories: %v", invs)
		}
		data, _, _ := unstructured.NestedStringMap(invs[1].Object, "data")
		var entries []map[string]string
		if err := json.Unmarshal([]byte(data["objects"]), &entries); err != nil || len(entries) != 3 {
			t.Fatalf("objects of fl-p01: %v (%v)", data["objects"], err)
		}
		if data["complete"] != map[bool]string{false: "false", true: "true"}[complete] || (data["renderHash"] == "") == complete {
			t.Fatalf("complete=%v: data %v", complete, data)
		}
	}
	b.label(objs[1], "c0")
	if l := objs[1].GetLabels(); l["regattx.dev/profile"] != "fl-p00" || l["regattx.dev/cluster"] != "c0" {
		t.Fatalf("labels %v", l)
	}
}
