package apply

import (
	"context"
	"errors"
	"time"

	"github.com/fluxcd/cli-utils/pkg/object"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Re-checking a waiting step (Request.Async)
//
// A cluster is reconciled again whenever one of its profiles turns healthy,
// a commit arrives or a retry is due; every other profile still waiting for
// health then resumes at its waiting step. Applying that step again would
// send a dry-run per object (and a lookup of their owners) to learn that
// nothing changed. So a pass re-checks such a step instead: it reads the
// health of what was not healthy, as the poll between passes does, and
// applies nothing, when all of this holds:
//   - this Manager applied the step at the same render hash, and its health
//     deadline has not passed (a pass after the deadline applies in full, so
//     a Failed pair's retry restores what was changed meanwhile);
//   - that apply sent every object of the step (none left to another owner);
//   - the inventory read now lists them, with the same sync mode, tier and
//     impersonated user, and no profile is being released to this one;
//   - for ContinuousWithDriftDetection, the drift watcher tracks the profile
//     and has no failed correction pending: an edit made during the wait is
//     corrected by the watcher, as after the pass.
//
// A Continuous profile is not re-applied while it waits, as it is not once it
// is healthy (the pass is skipped): an edit made meanwhile stays until the
// render changes or the deadline passes.

// awaitedUnchanged returns a copy of the profile's waiting step when the
// pass may re-check it instead of applying it (see above); nil otherwise.
func (c *Cluster) awaitedUnchanged(req Request, inv *Inventory, steps [][]desired) *awaiting {
	if !req.Async || inv == nil || len(req.Releasing) > 0 || inv.SyncMode != req.syncMode() ||
		inv.Tier != req.tier() || inv.Impersonate != req.Impersonate {
		return nil
	}
	if c.driftUnsettled(req) {
		return nil
	}
	c.mu.Lock()
	a := c.awaiting[req.Profile]
	var cp awaiting
	if a != nil {
		cp = *a
	}
	c.mu.Unlock()
	if a == nil || cp.expired || cp.renderHash != req.RenderHash || cp.step >= len(steps) ||
		cp.objects != len(steps[cp.step]) || !time.Now().Before(cp.deadline()) {
		return nil
	}
	keys := inv.keys()
	for _, d := range steps[cp.step] {
		if !keys[RefOf(d.obj).key()] {
			return nil
		}
	}
	return &cp
}

// recheck observes step i, which an earlier pass applied at this render and
// which waits for health, without applying it (see awaitedUnchanged): the
// objects that were healthy then count as healthy, the others are read once.
func (p *pass) recheck(ctx context.Context, i int, step Step, st []desired) error {
	objs := p.keep(st)
	pending := p.awaited.ids
	for _, id := range object.UnstructuredSetToObjMetadataSet(objs) {
		if !pending.Contains(id) {
			p.current.Store(id, true)
		}
	}
	err := p.observe(ctx, i, objs, false)
	if err == nil || errors.Is(err, errAwaiting) {
		return err
	}
	err = stepError(step, err)
	p.healthErrs = append(p.healthErrs, err)
	return err
}

// keep counts a step's objects as part of this pass without a request: in
// its inventory, tracked for drift, unchanged. It returns the objects.
func (p *pass) keep(st []desired) []*unstructured.Unstructured {
	objs := make([]*unstructured.Unstructured, 0, len(st))
	for _, d := range st {
		if p.hashes != nil {
			p.hashes[RefOf(d.obj).key()] = desiredHash(d.obj)
		}
		p.attempted = append(p.attempted, InventoryEntry{ObjectRef: RefOf(d.obj), Addon: d.addon})
		objs = append(objs, d.obj)
	}
	p.tracked = append(p.tracked, objs...)
	p.res.Counts.Unchanged += len(st)
	return objs
}
