package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/fluxcd/pkg/ssa"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Skipping unchanged objects (Request.SkipUnchanged, drift detection)
//
// An event profile's pair changes one instance at a time, yet its apply
// request holds every instance: re-applying them all costs a server-side
// apply per instance on every event. With SkipUnchanged, a pass
// sends no request for an object whose desired state (after labels and
// namespace placement) is byte-for-byte the one this Manager's previous
// pass of the profile applied, when that pass ended Applied (healthy), the
// inventory read now is complete and lists the object, and sync mode,
// tier, identity and takeovers are unchanged. Such an object stays in the
// pass's inventory and drift tracking, so prune never deletes it; it
// counts as unchanged and healthy. Anything else (a restarted daemon, a
// failed, progressing or superseded pass, a pending drift correction)
// applies in full. An object deleted out of band is restored by drift
// detection (ContinuousWithDriftDetection) or when its desired state
// changes, as for a pass with an unchanged render hash.
//
// A ContinuousWithDriftDetection profile whose drift watches track it skips
// the same way the objects whose health their metadata tells (ConfigMaps,
// Secrets, RBAC: see metadataOnly), without SkipUnchanged: its watches
// restore what changes on the cluster, and tracking it again at the end of
// the pass compares every object once. A fleet-wide one-line change thus
// applies one object per cluster, not the whole profile. Objects with a
// status are applied, so the pass waits for their health as before.
//
// A Manager that has not seen a profile yet (a restarted daemon, a
// replica that just gained the cluster) has no previous pass to compare
// with, while the process before it may have applied this very render and
// been stopped (SIGKILL, a lost lease) before it recorded the inventory.
// Its first full pass of the profile asks the cluster instead, for the
// objects a continuing Manager would skip and the inventory lists (an
// object it does not list was never applied: a pass records its intent
// before it creates anything): a server-side dry-run apply of each,
// compared with the live object. One the apply would not change
// (labels, annotations and body equal) is kept as unchanged and not
// applied again; any error or difference applies it.

// appliedSet maps object keys (ObjectRef.key) to the hash of the desired
// state applied.
type appliedSet map[ObjectRef]string

func desiredHash(o *unstructured.Unstructured) string {
	js, err := o.MarshalJSON()
	if err != nil {
		return "" // never equal: applied
	}
	sum := sha256.Sum256(js)
	return hex.EncodeToString(sum[:])
}

// skipsUnchanged reports whether a pass may skip objects applied as they
// are: Request.SkipUnchanged, or a drift-detected profile (see above).
func (r Request) skipsUnchanged() bool {
	return r.SkipUnchanged || r.detectsDrift()
}

// unchangedBase returns what the previous pass applied and the pass may
// skip; nil when it must apply everything.
func (c *Cluster) unchangedBase(req Request, inv *Inventory) appliedSet {
	if !req.skipsUnchanged() || inv == nil || !inv.Complete || len(req.Releasing) > 0 {
		return nil
	}
	if inv.SyncMode != req.syncMode() || inv.Tier != req.tier() || inv.Impersonate != req.Impersonate {
		return nil
	}
	if c.driftUnsettled(req) {
		return nil
	}
	st := c.state(req.Profile)
	if st == nil || !st.healthy || st.applied == nil {
		return nil
	}
	keys := inv.keys()
	out := make(appliedSet, len(st.applied))
	for ref, h := range st.applied {
		if keys[ref] {
			out[ref] = h
		}
	}
	return out
}

// splitUnchanged records the desired hashes of a step's objects and
// returns the ones to apply; the unchanged ones are kept as applied.
func (p *pass) splitUnchanged(ctx context.Context, st []desired) []desired {
	if !p.req.skipsUnchanged() {
		return st
	}
	keep := make([]bool, len(st))
	var confirm []int
	for i, d := range st {
		key, h := RefOf(d.obj).key(), desiredHash(d.obj)
		p.hashes[key] = h
		switch skippable := p.req.SkipUnchanged || p.metadataOnly(d.obj); {
		case skippable && p.base != nil && p.base[key] == h:
			keep[i] = true
		case skippable && p.confirm[key]:
			confirm = append(confirm, i)
		}
	}
	p.appliedLive(ctx, st, confirm, keep)
	var apply, kept []desired
	for i, d := range st {
		if keep[i] {
			kept = append(kept, d)
		} else {
			apply = append(apply, d)
		}
	}
	if len(kept) > 0 {
		p.keepStep(kept)
	}
	return apply
}

// appliedLive sets keep[i], for each index i in which, when the cluster
// already holds st[i] as applying it would leave it (ssa's Diff: a
// dry-run apply compared with the live object). The dry runs run in
// parallel; an error leaves keep[i] false, so the object is applied.
func (p *pass) appliedLive(ctx context.Context, st []desired, which []int, keep []bool) {
	var g errgroup.Group
	g.SetLimit(p.c.m.opts.Concurrency)
	for _, i := range which {
		g.Go(func() error {
			entry, _, _, err := p.rm.Diff(ctx, st[i].obj.DeepCopy(), ssa.DiffOptions{})
			keep[i] = err == nil && entry != nil && entry.Action == ssa.UnchangedAction
			return nil
		})
	}
	_ = g.Wait() // never fails: an object not confirmed is applied
}

// appliedHashes is what the pass leaves for the next one to skip: the
// hashes of every object, when the pass ended Applied.
func (p *pass) appliedHashes() appliedSet {
	if !p.req.skipsUnchanged() || p.res.State != StateApplied {
		return nil
	}
	return p.hashes
}
