package apply

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// inventoryCache keeps the inventories a cluster's last full listing
// decoded, by ConfigMap name and resourceVersion. A listing whose
// ConfigMaps all kept their resourceVersions reads their metadata only
// (see listInventories): on a converged cluster that is every listing, and
// the inventories' data is neither sent nor decoded again. Safe for
// concurrent use; the zero value is empty.
type inventoryCache struct {
	mu     sync.Mutex
	byName map[string]cachedInventory
}

type cachedInventory struct {
	resourceVersion string
	inv             *Inventory
}

// unchanged lists the inventories' metadata and returns the cached
// inventories when every ConfigMap of the fleet is cached at its listed
// resourceVersion and none of the cache is gone; ok is false otherwise
// (one changed, is new or gone, or is a legacy one to adopt), and the
// caller lists them in full. The inventories
// returned are copies that share their Objects, which callers only read.
func (ic *inventoryCache) unchanged(ctx context.Context, c client.Client, f Fleet) (invs []*Inventory, ok bool, err error) {
	meta := &metav1.PartialObjectMetadataList{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := c.List(ctx, meta, client.InNamespace(f.namespace()), client.HasLabels{LabelInventory}); err != nil {
		return nil, false, fmt.Errorf("list inventories: %w", err)
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
			return nil, false, nil
		}
		cp := *e.inv
		invs = append(invs, &cp)
	}
	if len(invs) != len(ic.byName) {
		return nil, false, nil // one was deleted: list again, so claimant forgets it
	}
	slices.SortFunc(invs, func(a, b *Inventory) int { return cmp.Compare(a.Profile, b.Profile) })
	return invs, true, nil
}

// store replaces the cache with the fleet's own inventories of a full
// listing (legacy ones are left out: adopting them writes new ConfigMaps,
// which the next listing decodes).
func (ic *inventoryCache) store(byName map[string]cachedInventory) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	ic.byName = byName
}
