package apply

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Where inventories live in each target cluster.
const (
	InventoryNamespace = "regatta-system"
	InventoryPrefix    = "regatta-inv-"
	// LabelInventory marks an inventory ConfigMap with its profile.
	LabelInventory = "regatta.dev/inventory"
)

// InventoryEntry is one object a profile applied.
type InventoryEntry struct {
	ObjectRef
	Addon string `json:"addon,omitempty"`
}

// Inventory is what one profile applied to one cluster, stored in the
// cluster as the ConfigMap regatta-inv-<fleet>.<profile> in regatta-system
// (in its first namespace for a namespace-scoped entry).
type Inventory struct {
	Profile              string
	Revision             string
	RenderHash           string
	SyncMode             string
	StopMatchingBehavior string
	Tier                 int
	// Complete is true when the last pass applied every object and found
	// them healthy.
	Complete bool
	// Health is the health summary of that complete pass (no Unhealthy
	// list), what a restarted daemon reports for a pair it restores.
	Health Health
	// Impersonate is the user the pair's objects are written as (a
	// tenant's ServiceAccount), so that drift corrections and a withdrawal
	// meet the same RBAC as the apply; empty for regatta's own identity.
	Impersonate string
	// Objects in apply order.
	Objects []InventoryEntry
}

// InventoryName returns the ConfigMap name of a profile's inventory.
func InventoryName(profile string) string { return InventoryPrefix + profile }

func (inv *Inventory) keys() map[ObjectRef]bool {
	set := make(map[ObjectRef]bool, len(inv.Objects))
	for _, e := range inv.Objects {
		set[e.key()] = true
	}
	return set
}

// readInventory returns the profile's inventory in the fleet, nil when
// there is none. A legacy inventory (see Fleet.Legacy) is adopted.
func readInventory(ctx context.Context, c client.Client, f Fleet, profile string) (*Inventory, error) {
	cm, err := getInventory(ctx, c, f.namespace(), f.inventoryName(profile))
	if err != nil || (cm != nil && f.owns(cm.Labels)) {
		return decodeConfigMap(cm, err)
	}
	if !f.Legacy || f.ID == "" {
		return nil, nil
	}
	cm, err = getInventory(ctx, c, f.namespace(), InventoryName(profile))
	if err != nil || cm == nil || !isLegacyInventory(cm) {
		return nil, err
	}
	inv, err := decodeConfigMap(cm, nil)
	if err != nil {
		return nil, err
	}
	return inv, f.migrate(ctx, c, inv)
}

func getInventory(ctx context.Context, c client.Client, ns, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: ns, Name: name}
	if err := c.Get(ctx, key, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read inventory ConfigMap/%s/%s: %w", key.Namespace, key.Name, err)
	}
	return cm, nil
}

func decodeConfigMap(cm *corev1.ConfigMap, err error) (*Inventory, error) {
	if err != nil || cm == nil {
		return nil, err
	}
	return decodeInventory(cm.Labels[LabelInventory], cm.Data)
}

func decodeInventory(profile string, data map[string]string) (*Inventory, error) {
	inv := &Inventory{Profile: profile, Revision: data["revision"], RenderHash: data["renderHash"],
		SyncMode: data["syncMode"], StopMatchingBehavior: data["stopMatchingBehavior"],
		Complete: data["complete"] == "true", Impersonate: data["impersonate"]}
	inv.Tier, _ = strconv.Atoi(data["tier"])
	if h := data["health"]; h != "" {
		if err := json.Unmarshal([]byte(h), &inv.Health); err != nil {
			return nil, fmt.Errorf("inventory of profile %s: health: %w", profile, err)
		}
	}
	if err := json.Unmarshal([]byte(data["objects"]), &inv.Objects); err != nil {
		return nil, fmt.Errorf("inventory of profile %s: objects: %w", profile, err)
	}
	return inv, nil
}

func (inv *Inventory) configMap(f Fleet) (*unstructured.Unstructured, error) {
	if inv.Objects == nil {
		inv.Objects = []InventoryEntry{}
	}
	objects, err := json.Marshal(inv.Objects)
	if err != nil {
		return nil, err
	}
	health, err := json.Marshal(inv.Health)
	if err != nil {
		return nil, err
	}
	labels := map[string]any{LabelInventory: inv.Profile, "app.kubernetes.io/managed-by": FieldManager}
	if f.ID != "" {
		labels[LabelFleet] = f.ID
	}
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": f.inventoryName(inv.Profile), "namespace": f.namespace(),
			"labels": labels,
		},
		"data": map[string]any{
			"revision": inv.Revision, "renderHash": inv.RenderHash, "syncMode": inv.SyncMode,
			"stopMatchingBehavior": inv.StopMatchingBehavior, "tier": strconv.Itoa(inv.Tier),
			"complete": strconv.FormatBool(inv.Complete), "objects": string(objects), "health": string(health),
		},
	}}
	if inv.Impersonate != "" {
		cm.Object["data"].(map[string]any)["impersonate"] = inv.Impersonate
	}
	return cm, nil
}

// writeInventory stores the inventory by server-side apply, creating the
// namespace when it is missing, and keeps it in cache (nil: none) at the
// resourceVersion the write left. Only the metadata of the answer is read.
func writeInventory(ctx context.Context, c client.Client, f Fleet, inv *Inventory, cache *inventoryCache) error {
	cm, err := inv.configMap(f)
	if err != nil {
		return err
	}
	m, err := applyForMetadata(ctx, c, cm)
	if apierrors.IsNotFound(err) && !f.scoped() {
		if err = ensureNamespace(ctx, c, InventoryNamespace); err == nil {
			m, err = applyForMetadata(ctx, c, cm)
		}
	}
	if err != nil {
		return fmt.Errorf("write inventory ConfigMap/%s/%s: %w", f.namespace(), cm.GetName(), err)
	}
	cache.put(cm, m.GetResourceVersion())
	return nil
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
	_, err := applyForMetadata(ctx, c, ns)
	return err
}

func applyObject(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	return c.Patch(ctx, obj, client.Apply, client.ForceOwnership, client.FieldOwner(FieldManager))
}

// deleteInventory removes the profile's inventory; a missing one is fine.
func deleteInventory(ctx context.Context, c client.Client, f Fleet, profile string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace(), Name: f.inventoryName(profile)}}
	if err := c.Delete(ctx, cm); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete inventory ConfigMap/%s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return nil
}

// listInventories returns every profile inventory of the fleet in the
// cluster; legacy ones (see Fleet.Legacy) are adopted. cache, when not
// nil, is refilled with the fleet's own.
func listInventories(ctx context.Context, c client.Client, f Fleet, cache *inventoryCache) ([]*Inventory, error) {
	list := &corev1.ConfigMapList{}
	if err := c.List(ctx, list, client.InNamespace(f.namespace()), client.HasLabels{LabelInventory}); err != nil {
		return nil, fmt.Errorf("list inventories: %w", err)
	}
	byProfile := map[string]*Inventory{}
	cached := map[string]cachedInventory{}
	var legacy []*Inventory
	for i := range list.Items {
		cm := &list.Items[i]
		if !f.owns(cm.Labels) {
			continue
		}
		inv, err := decodeConfigMap(cm, nil)
		if err != nil {
			return nil, err
		}
		if f.ID != "" && isLegacyInventory(cm) {
			legacy = append(legacy, inv)
			continue
		}
		byProfile[inv.Profile] = inv
		cp := *inv
		cached[cm.Name] = cachedInventory{resourceVersion: cm.ResourceVersion, inv: &cp}
	}
	if cache != nil {
		cache.store(cached)
	}
	for _, inv := range legacy {
		if byProfile[inv.Profile] != nil {
			continue // adopted already; the fleet's own copy wins
		}
		if err := f.migrate(ctx, c, inv); err != nil {
			return nil, err
		}
		byProfile[inv.Profile] = inv
	}
	out := slices.Collect(maps.Values(byProfile))
	slices.SortFunc(out, func(a, b *Inventory) int { return cmp.Compare(a.Profile, b.Profile) })
	return out, nil
}

// union returns prev's entries followed by those of next that prev lacks.
func union(prev, next []InventoryEntry) []InventoryEntry {
	out := slices.Clone(prev)
	seen := make(map[ObjectRef]bool, len(prev))
	for _, e := range prev {
		seen[e.key()] = true
	}
	for _, e := range next {
		if !seen[e.key()] {
			out = append(out, e)
		}
	}
	return out
}

// minus returns the entries of a missing from b (by group, kind, namespace
// and name), in a's order.
func minus(a []InventoryEntry, b map[ObjectRef]bool) []InventoryEntry {
	var out []InventoryEntry
	for _, e := range a {
		if !b[e.key()] {
			out = append(out, e)
		}
	}
	return out
}

// equalInventories reports whether two inventories would be stored alike.
func equalInventories(a, b *Inventory) bool {
	return a.Profile == b.Profile && a.Revision == b.Revision && a.RenderHash == b.RenderHash &&
		a.SyncMode == b.SyncMode && a.StopMatchingBehavior == b.StopMatchingBehavior &&
		a.Tier == b.Tier && a.Complete == b.Complete && a.Health.equal(b.Health) && slices.Equal(a.Objects, b.Objects)
}
