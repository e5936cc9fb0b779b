package apply

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Ownership is decided by inventories, not by labels: the labels
// regatta.dev/profile and regatta.dev/fleet only say who should own an
// object, and anyone can change them. An object whose label names another
// profile is that profile's only when the profile's inventory lists it (a
// takeover, or a real conflict between two profiles); otherwise the label
// is drift, and the profile whose inventory lists the object restores it.

// claims caches, for one pass or drift check, which objects the
// inventories of other profiles of the fleet list.
type claims struct {
	kube  client.Client
	fleet Fleet
	inv   map[string]map[ObjectRef]bool
}

func newClaims(kube client.Client, f Fleet) *claims {
	return &claims{kube: kube, fleet: f, inv: map[string]map[ObjectRef]bool{}}
}

// claimed reports whether the profile that labels (of a live object) name
// really owns the object ref: it is of this fleet and its inventory lists
// ref. An object labelled for another fleet is never claimed this way: a
// fleet never takes over another's objects, so on an object this fleet
// applied such a label is drift.
func (c *claims) claimed(ctx context.Context, ref ObjectRef, labels map[string]string) (bool, error) {
	profile := labels[LabelProfile]
	if profile == "" || !c.fleet.owns(labels) {
		return false, nil
	}
	keys, ok := c.inv[profile]
	if !ok {
		inv, err := readInventory(ctx, c.kube, c.fleet, profile)
		if err != nil {
			return false, fmt.Errorf("ownership of %s: %w", ref, err)
		}
		if inv != nil {
			keys = inv.keys()
		}
		c.inv[profile] = keys
	}
	return keys[ref.key()], nil
}

// relabelled is the change message of an object whose labels named a
// profile without claim to it.
func relabelled(o owner) string {
	return fmt.Sprintf("ownership label corrected: profile %s does not hold it in its inventory", o.profile)
}

// movedTo reports whether a live object profile tracks now belongs to
// another profile whose inventory lists it.
func (w *DriftWatcher) movedTo(ctx context.Context, cl *claims, profile string, ref ObjectRef, live *unstructured.Unstructured) (bool, error) {
	if live == nil {
		return false, nil
	}
	labels := live.GetLabels()
	if labels[LabelProfile] == profile && w.fleet.owns(labels) {
		return false, nil
	}
	return cl.claimed(ctx, ref, labels)
}

// remember keeps the inventories of a listing for claimant; the index
// of their objects is built when first needed.
func (c *Cluster) remember(invs []*Inventory) {
	c.listedMu.Lock()
	c.listedInvs, c.listed = invs, nil
	c.listedMu.Unlock()
}

// listedIndex says which profile's inventory held each object at the last
// listing; c.listedMu is held.
func (c *Cluster) listedIndex() map[ObjectRef]owner {
	if c.listed == nil && len(c.listedInvs) > 0 {
		c.listed = map[ObjectRef]owner{}
		for _, inv := range c.listedInvs {
			for _, e := range inv.Objects {
				c.listed[e.key()] = owner{profile: inv.Profile, tier: inv.Tier}
			}
		}
	}
	return c.listed
}

// claimant is the other profile whose inventory held ref at the last
// listing: an object that lost its ownership labels out of band is still
// that profile's, and another profile rendering it is in conflict.
func (c *Cluster) claimant(ref ObjectRef, profile string) (owner, bool) {
	c.listedMu.Lock()
	defer c.listedMu.Unlock()
	o, ok := c.listedIndex()[ref]
	if !ok || o.profile == profile {
		return owner{}, false
	}
	o.labels = map[string]string{LabelProfile: o.profile}
	if c.fleet().ID != "" {
		o.labels[LabelFleet] = c.fleet().ID
	}
	return o, true
}

// candidate is the owner an object's labels name (or, when its labels
// were removed, the inventory that held it at the last listing), whether
// there is one, and whether that owner really holds it: another profile
// of the fleet whose inventory lists the object. A listing-derived owner
// that no longer holds the object counts as none.
func (p *pass) candidate(ctx context.Context, cl *claims, owners map[ObjectRef]owner, ref ObjectRef) (owner, bool, bool, error) {
	o, labelled := owners[ref.key()]
	listed := false
	if !labelled {
		o, labelled = p.c.claimant(ref.key(), p.req.Profile)
		listed = labelled
	}
	if !labelled || o.fleet != "" || o.profile == p.req.Profile {
		return o, labelled, labelled, nil
	}
	real, err := cl.claimed(ctx, ref, o.labels)
	if listed && !real {
		return owner{}, false, false, err
	}
	return o, true, real, err
}
