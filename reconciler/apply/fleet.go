package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LabelFleet names the fleet (one regatta following one repository) that
// owns an object or an inventory. Two fleets sharing a cluster never read,
// prune or withdraw each other's inventories and objects.
const LabelFleet = "regatta.dev/fleet"

// Fleet is the identity a Manager acts under.
type Fleet struct {
	// ID is the value of LabelFleet on everything this fleet writes, and a
	// part of its inventories' names. Empty: objects and inventories carry
	// no fleet label and inventories are named regatta-inv-<profile>, as
	// before fleets existed (a cluster with one regatta only).
	ID string
	// Legacy also counts objects and inventories without a fleet label as
	// this fleet's: those written before fleet identities existed. Such an
	// inventory is migrated (rewritten under ID, the old one deleted) when
	// it is first listed or read.
	Legacy bool
	// ns is the namespace of the inventories and registration, set per
	// cluster (see Cluster.fleet): "" is InventoryNamespace, a
	// namespace-scoped entry's is its first namespace.
	ns string
}

// scoped reports a namespace-scoped entry's fleet: nothing outside its
// namespaces may be read or written.
func (f Fleet) scoped() bool { return f.ns != "" }

// namespace is where the fleet's inventories live in the cluster.
func (f Fleet) namespace() string {
	if f.ns == "" {
		return InventoryNamespace
	}
	return f.ns
}

// Validate checks that ID is a label value short enough for ConfigMap
// names.
func (f Fleet) Validate() error {
	if f.ID == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(f.ID); len(errs) > 0 {
		return fmt.Errorf("fleet identity %q: %s", f.ID, errs[0])
	}
	return nil
}

// owns reports whether labels (of an object or inventory) are this fleet's.
func (f Fleet) owns(labels map[string]string) bool {
	l, ok := labels[LabelFleet]
	if !ok || l == "" {
		return f.ID == "" || f.Legacy
	}
	return l == f.ID
}

// inventoryName is the ConfigMap name of a profile's inventory.
func (f Fleet) inventoryName(profile string) string {
	if f.ID == "" {
		return InventoryName(profile)
	}
	return InventoryPrefix + f.ID + "." + profile
}

// label sets the fleet label on an object.
func (f Fleet) label(obj *unstructured.Unstructured) {
	if f.ID == "" {
		return
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelFleet] = f.ID
	obj.SetLabels(labels)
}

// ownerOf is the owner an object's labels and annotations name; fleet is
// set when the object is another fleet's; rv is the object's
// resourceVersion.
func (f Fleet) ownerOf(labels, annotations map[string]string, rv string) owner {
	o := owner{profile: labels[LabelProfile], tier: tierOf(annotations), tenant: labels[LabelTenant], labels: labels,
		resourceVersion: rv}
	if !f.owns(labels) {
		o.fleet = foreign(labels)
	}
	return o
}

// foreign names the fleet of labels that are not this fleet's.
func foreign(labels map[string]string) string {
	if l := labels[LabelFleet]; l != "" {
		return "fleet " + l
	}
	return "a regatta without fleet identity"
}

// migrate rewrites a legacy inventory (no fleet label, legacy name) under
// the fleet's identity and deletes the old one. Callers checked it is one.
func (f Fleet) migrate(ctx context.Context, c client.Client, inv *Inventory) error {
	if f.ID == "" {
		return nil
	}
	if err := writeInventory(ctx, c, f, inv, nil); err != nil {
		return fmt.Errorf("adopt inventory of profile %s: %w", inv.Profile, err)
	}
	old := &corev1.ConfigMap{}
	old.Namespace, old.Name = f.namespace(), InventoryName(inv.Profile)
	if err := c.Delete(ctx, old); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("adopt inventory of profile %s: delete ConfigMap/%s/%s: %w", inv.Profile, old.Namespace, old.Name, err)
	}
	return nil
}

// isLegacyInventory reports a ConfigMap written before fleet identities.
func isLegacyInventory(cm *corev1.ConfigMap) bool {
	return cm.Labels[LabelFleet] == "" && cm.Name == InventoryName(cm.Labels[LabelInventory])
}

var nonLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// DeriveFleetID makes a stable fleet identity from a repository location
// (see repo.CanonicalURL): its last path element, made a DNS label, and
// 8 hex digits of the SHA-256 of the whole location, e.g. fleet-infra-1a2b3c4d.
func DeriveFleetID(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	base := canonical[strings.LastIndex(canonical, "/")+1:]
	base = strings.Trim(nonLabel.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-")
	}
	if base == "" {
		base = "fleet"
	}
	return base + "-" + hex.EncodeToString(sum[:4])
}

// fleet is the Manager's fleet with the cluster's inventory namespace: the
// first namespace of a namespace-scoped entry. Legacy inventories exist
// only in InventoryNamespace.
func (c *Cluster) fleet() Fleet {
	f := c.m.opts.Fleet
	if nss := c.Namespaces(); len(nss) > 0 {
		f.ns, f.Legacy = nss[0], false
	}
	return f
}

// Describe says who owns the object of a conflict, for status messages.
func (c Conflict) Describe() string {
	if c.OwnerFleet != "" {
		return fmt.Sprintf("%s is owned by profile %s of %s", c.Object, c.Owner, c.OwnerFleet)
	}
	return fmt.Sprintf("%s is owned by profile %s (tier %d)", c.Object, c.Owner, c.OwnerTier)
}
