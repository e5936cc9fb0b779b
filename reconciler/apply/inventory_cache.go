package apply

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// inventoryCache keeps the inventories a cluster's last full listing
// decoded, and those this Manager wrote since, by ConfigMap name and
// resourceVersion. A listing whose ConfigMaps all kept their
// resourceVersions reads their metadata only (see listInventories): on a
// converged cluster that is every listing, and after a pass that wrote its
// own inventory too, so the inventories' data is neither sent nor decoded
// again. Safe for concurrent use; the zero value is empty.
type inventoryCache struct {
	mu     sync.Mutex
	byName map[string]cachedInventory
	// written is set by put until a listing is served from the cache.
	written bool
}

type cachedInventory struct {
	resourceVersion string
	inv             *Inventory
}

// unchanged lists the inventories' metadata and returns the cached
// inventories when every ConfigMap of the fleet is cached at its listed
// resourceVersion and none of the cache is gone; ok is false otherwise
// (one changed, is new or gone, or is a legacy one to adopt), and the
// caller lists them in full. written reports that the inventories returned
// include one put since the last listing served. The inventories
// returned are copies that share their Objects, which callers only read.
func (ic *inventoryCache) unchanged(ctx context.Context, c client.Client, f Fleet) (invs []*Inventory, ok, written bool, err error) {
	meta := &metav1.PartialObjectMetadataList{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := c.List(ctx, meta, client.InNamespace(f.namespace()), client.HasLabels{LabelInventory}); err != nil {
		return nil, false, false, fmt.Errorf("list inventories: %w", err)
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	for i := range meta.Items {
		m := &meta.Items[i]
		if !f.owns(m.Labels) {
			continue
		}
		e, hit := ic.byName[m.Name]
		if !hit || e.resourceVersion != m.ResourceVersion {
			return nil, false, false, nil
		}
		cp := *e.inv
		invs = append(invs, &cp)
	}
	if len(invs) != len(ic.byName) {
		return nil, false, false, nil // one was deleted: list again, so claimant forgets it
	}
	slices.SortFunc(invs, func(a, b *Inventory) int { return cmp.Compare(a.Profile, b.Profile) })
	written, ic.written = ic.written, false
	return invs, true, written, nil
}

// store replaces the cache with the fleet's own inventories of a full
// listing (legacy ones are left out: adopting them writes new ConfigMaps,
// which the next listing decodes).
func (ic *inventoryCache) store(byName map[string]cachedInventory) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	ic.byName, ic.written = byName, false
}

// put keeps the inventory ConfigMap cm that a write left at
// resourceVersion rv, decoded from its data as a listing would decode it
// (a ConfigMap it cannot decode is dropped from the cache: the next
// listing reads it in full). A nil cache keeps nothing.
func (ic *inventoryCache) put(cm *unstructured.Unstructured, rv string) {
	if ic == nil {
		return
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	inv, err := decodeInventory(cm.GetLabels()[LabelInventory], data)
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.byName == nil {
		ic.byName = map[string]cachedInventory{}
	}
	if err != nil || rv == "" {
		delete(ic.byName, cm.GetName())
		return
	}
	ic.byName[cm.GetName()] = cachedInventory{resourceVersion: rv, inv: inv}
	ic.written = true
}
