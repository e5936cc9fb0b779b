package apply

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
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
// cluster as the ConfigMap regatta-inv-<profile> in regatta-system.
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

// readInventory returns the profile's inventory, nil when there is none.
func readInventory(ctx context.Context, c client.Client, profile string) (*Inventory, error) {
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: InventoryNamespace, Name: InventoryName(profile)}
	if err := c.Get(ctx, key, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read inventory ConfigMap/%s/%s: %w", key.Namespace, key.Name, err)
	}
	return decodeInventory(profile, cm.Data)
}

func decodeInventory(profile string, data map[string]string) (*Inventory, error) {
	inv := &Inventory{Profile: profile, Revision: data["revision"], RenderHash: data["renderHash"],
		SyncMode: data["syncMode"], StopMatchingBehavior: data["stopMatchingBehavior"],
		Complete: data["complete"] == "true"}
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

func (inv *Inventory) configMap() (*unstructured.Unstructured, error) {
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
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": InventoryName(inv.Profile), "namespace": InventoryNamespace,
			"labels": map[string]any{LabelInventory: inv.Profile, "app.kubernetes.io/managed-by": FieldManager},
		},
		"data": map[string]any{
			"revision": inv.Revision, "renderHash": inv.RenderHash, "syncMode": inv.SyncMode,
			"stopMatchingBehavior": inv.StopMatchingBehavior, "tier": strconv.Itoa(inv.Tier),
			"complete": strconv.FormatBool(inv.Complete), "objects": string(objects), "health": string(health),
		},
	}}
	return cm, nil
}

// writeInventory stores the inventory by server-side apply, creating the
// namespace when it is missing.
func writeInventory(ctx context.Context, c client.Client, inv *Inventory) error {
	cm, err := inv.configMap()
	if err != nil {
		return err
	}
	err = applyObject(ctx, c, cm)
	if apierrors.IsNotFound(err) {
		if err = ensureNamespace(ctx, c, InventoryNamespace); err == nil {
			err = applyObject(ctx, c, cm)
		}
	}
	if err != nil {
		return fmt.Errorf("write inventory ConfigMap/%s/%s: %w", InventoryNamespace, cm.GetName(), err)
	}
	return nil
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
	return applyObject(ctx, c, ns)
}

func applyObject(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	return c.Patch(ctx, obj, client.Apply, client.ForceOwnership, client.FieldOwner(FieldManager))
}

// deleteInventory removes the profile's inventory; a missing one is fine.
func deleteInventory(ctx context.Context, c client.Client, profile string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: InventoryNamespace, Name: InventoryName(profile)}}
	if err := c.Delete(ctx, cm); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete inventory ConfigMap/%s/%s: %w", InventoryNamespace, cm.Name, err)
	}
	return nil
}

// listInventories returns every profile inventory in the cluster.
func listInventories(ctx context.Context, c client.Client) ([]*Inventory, error) {
	list := &corev1.ConfigMapList{}
	if err := c.List(ctx, list, client.InNamespace(InventoryNamespace), client.HasLabels{LabelInventory}); err != nil {
		return nil, fmt.Errorf("list inventories: %w", err)
	}
	out := make([]*Inventory, 0, len(list.Items))
	for _, cm := range list.Items {
		inv, err := decodeInventory(cm.Labels[LabelInventory], cm.Data)
		if err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
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
