package apply

import (
	"encoding/json"
	"fmt"
	"testing"
)

// entries returns n inventory entries of a profile's usual kinds.
func entries(n, offset int) []InventoryEntry {
	kinds := []string{"ConfigMap", "Service", "ServiceAccount", "Secret", "Role", "RoleBinding"}
	out := make([]InventoryEntry, n)
	for i := range out {
		k := kinds[(i+offset)%len(kinds)]
		group := ""
		if k == "Role" || k == "RoleBinding" {
			group = "rbac.authorization.k8s.io"
		}
		out[i] = InventoryEntry{ObjectRef: ObjectRef{Group: group, Version: "v1", Kind: k,
			Namespace: "ns", Name: fmt.Sprintf("obj-%05d", i+offset)}, Addon: "app"}
	}
	return out
}

// BenchmarkInventoryDiff is what a pass computes from the previous and the
// new inventory: the prune set (previous minus new) and the intent (union),
// with 10% of the objects replaced.
func BenchmarkInventoryDiff(b *testing.B) {
	for _, n := range []int{30, 300, 3000} {
		prev, next := entries(n, 0), entries(n, n/10)
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				prune := minus(prev, keysOf(next, nil))
				intent := union(prev, next)
				if len(prune) != n/10 || len(intent) != n+n/10 {
					b.Fatalf("prune %d intent %d", len(prune), len(intent))
				}
			}
		})
	}
}

// BenchmarkInventoryUnchanged is the comparison that keeps an unchanged
// inventory from being written.
func BenchmarkInventoryUnchanged(b *testing.B) {
	a := &Inventory{Profile: "p", RenderHash: "h", Objects: entries(300, 0)}
	c := &Inventory{Profile: "p", RenderHash: "h", Objects: entries(300, 0)}
	b.ReportAllocs()
	for b.Loop() {
		if !equalInventories(a, c) {
			b.Fatal("differ")
		}
	}
}

// BenchmarkInventoryDecode decodes a 300-object inventory ConfigMap, read
// on every pass of every pair.
func BenchmarkInventoryDecode(b *testing.B) {
	objects, err := json.Marshal(entries(300, 0))
	if err != nil {
		b.Fatal(err)
	}
	data := map[string]string{"renderHash": "h", "tier": "100", "complete": "true", "objects": string(objects)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeInventory("p", data); err != nil {
			b.Fatal(err)
		}
	}
}
