package diff

import (
	"context"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/reconciler/tenancy"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// renderAll renders every pair that may change, Concurrency at a time.
// Pairs of a removed cluster are not rendered: its objects stay.
func (c *comparison) renderAll(ctx context.Context, entries []*entry) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.opts.Concurrency)
	for _, e := range entries {
		for _, p := range e.pairs {
			if e.change == ClusterRemoved {
				p.set = emptySet()
				p.result = &ProfileChange{Profile: p.profile, Change: p.change, Reasons: p.reasons, Objects: p.set.objects}
				continue
			}
			g.Go(func() error { return c.renderPair(gctx, p) })
		}
	}
	return g.Wait()
}

// renderPair renders a pair at the sides it exists on and records what
// changes. Equal render keys (equal inputs) or equal output hashes mean
// nothing changes, and no object is compared.
func (c *comparison) renderPair(ctx context.Context, p *pair) error {
	if c.eventPair(ctx, p) {
		return nil
	}
	var b, h *render.Result
	if p.change != ProfileGained {
		b, p.baseErr = c.render(ctx, c.base, p)
	}
	if p.change != ProfileLost {
		h, p.headErr = c.render(ctx, c.head, p)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.headErr != nil {
		return nil
	}
	if p.change == ProfileUpdated && b != nil && (b.Key == h.Key || b.Hash == h.Hash) {
		return nil
	}
	set := c.objectSet(b, h, p)
	if p.change == ProfileUpdated && len(set.objects) == 0 && p.baseErr == nil {
		return nil
	}
	p.set = set
	p.result = &ProfileChange{Profile: p.profile, Change: p.change, Reasons: p.reasons,
		Notes: slices.Concat(p.notes, baseErrorNotes(p)), Counts: set.counts, Objects: set.objects,
		Artifacts: artifactsOf(h)}
	return nil
}

// artifactsOf lists the OCI artifacts a rendering read (none for nil).
func artifactsOf(res *render.Result) []status.Artifact {
	if res == nil {
		return nil
	}
	var out []status.Artifact
	for _, a := range res.Artifacts {
		out = append(out, status.Artifact{Addon: a.Addon, URL: a.URL, Digest: a.Digest})
	}
	return out
}

func baseErrorNotes(p *pair) []string {
	if p.baseErr == nil {
		return nil
	}
	if p.change == ProfileLost {
		return []string{"the base revision fails to render this profile, so the objects it withdraws are unknown"}
	}
	return []string{"the base revision fails to render this profile: its objects are shown as created"}
}

// render renders a pair at one side; a tenant's objects outside its
// namespaces or kinds fail it as a render error does.
func (c *comparison) render(ctx context.Context, s *side, p *pair) (*render.Result, error) {
	prof := s.Fleet.Profile(p.profile)
	res, err := c.opts.Renderer.Render(ctx, render.Request{FS: s.Fleet.FS, Revision: s.Revision,
		Profile: prof, Cluster: s.facts[p.cluster], TreeHash: s.TreeHash})
	if err != nil {
		return nil, err
	}
	if err := tenancy.Err(prof, res, tenancy.Options{FS: s.Fleet.FS}); err != nil {
		return nil, err
	}
	return res, nil
}

// withdrawAction is what losing a profile does to its objects: the
// head's stopMatchingBehavior when the profile still exists, else the one
// the base recorded in the cluster's inventory.
func (c *comparison) withdrawAction(profile string) string {
	prof := c.head.Fleet.Profile(profile)
	if prof == nil {
		prof = c.base.Fleet.Profile(profile)
	}
	if prof.Spec.StopMatchingBehavior == spec.StopMatchingLeavePolicies {
		return ActionReleased
	}
	return ActionDeleted
}
