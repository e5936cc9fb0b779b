package reconciler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// applyWaves applies the matched profiles wave by wave. Profiles of one
// wave are independent and run concurrently; a profile whose dependency is
// not Applied waits, and unrelated profiles go on.
func (p *clusterPass) applyWaves(ctx context.Context, a plan.Assignment, gone []*apply.Inventory) {
	releasing := make([]string, len(gone))
	for i, inv := range gone {
		releasing[i] = inv.Profile
	}
	if a.Err != nil {
		for _, prof := range matchedProfiles(p.rev.repo, p.st.Labels, p.spec.Metadata.Name) {
			p.setResult(status.Profile{Name: prof.Metadata.Name, State: status.StateFailed, Error: &status.Error{Message: a.Err.Error()}})
		}
		return
	}
	p.cl.ScopeDrift(driftDetected(a))
	for _, wave := range a.Waves {
		if p.stopped() {
			return
		}
		var wg sync.WaitGroup
		for _, prof := range wave {
			wg.Go(func() { p.setResult(p.runProfile(ctx, prof, a.Missing[prof.Metadata.Name], releasing)) })
		}
		wg.Wait()
	}
}

// runProfile renders and applies one profile, unless a dependency is not
// ready. A render failure applies and deletes nothing for the pair.
func (p *clusterPass) runProfile(ctx context.Context, prof *spec.Profile, missing, releasing []string) status.Profile {
	name := prof.Metadata.Name
	if rt := p.rev.repo.Refusal(prof); rt != nil {
		inv, listed := p.inventoryOf(name)
		return refusedTenant(name, rt, inv, listed)
	}
	if len(missing) > 0 {
		return waiting(name, fmt.Sprintf("dependency %s does not select this cluster", strings.Join(missing, ", ")))
	}
	for _, d := range prof.Spec.DependsOn {
		if dep, _ := p.result(d); dep.State != status.StateApplied {
			return waiting(name, fmt.Sprintf("waiting for %s (%s)", d, orPending(dep.State)))
		}
	}
	pick := p.pick(ctx, prof)
	if pick.skip != nil {
		return p.reportRollout(prof, pick, *pick.skip)
	}
	return p.reportRollout(prof, pick, p.applyProfile(ctx, pick.rev, pick.prof, releasing))
}

// failed is a pair whose render or request failed: nothing was applied
// or deleted, so its objects are still those its inventory lists.
func (p *clusterPass) failed(name, rev string, e *status.Error) status.Profile {
	s := status.Profile{Name: name, State: status.StateFailed, Revision: rev, Error: e}
	if inv := p.inventories[name]; inv != nil {
		s.Objects = len(inv.Objects)
	}
	return s
}

// applyProfile renders prof at rev (the revision in force, or the one a
// pair is pinned to by its rollout) and applies it.
func (p *clusterPass) applyProfile(ctx context.Context, rev *revision, prof *spec.Profile, releasing []string) status.Profile {
	name := prof.Metadata.Name
	res, instances, err := p.render(ctx, rev, prof)
	if err != nil {
		p.log.Error("render failed; nothing applied or deleted for the pair", "profile", name, "error", err)
		return p.failed(name, rev.sha, renderError(err))
	}
	if err := p.guardScope(rev, prof, res); err != nil {
		p.log.Error("render reaches beyond the cluster's namespaces; nothing applied or deleted for the pair", "profile", name, "error", err)
		return status.Profile{Name: name, State: status.StateFailed, Revision: rev.sha, Error: tenantError(prof, err)}
	}
	if err := p.guardTenant(ctx, rev, prof, res); err != nil {
		p.log.Error("tenant profile refused; nothing applied or deleted for the pair", "profile", name, "error", err)
		return p.failed(name, rev.sha, tenantError(prof, err))
	}
	req, err := p.request(rev, prof, res)
	req.Releasing = releasing
	if t := prof.Tenant(); t != nil {
		req.Impersonate, req.Owner = t.Spec.ServiceAccount.Username(), t.Name()
	}
	if p.inventories != nil {
		req.Listed, req.Inventory = true, p.inventories[name]
	}
	if err != nil {
		return p.failed(name, rev.sha, &status.Error{File: prof.Source.File, Message: err.Error()})
	}
	out := p.cl.Apply(ctx, req)
	p.r.countApply(out)
	if out.State == apply.StateFailed {
		p.mu.Lock()
		p.retry = true
		p.mu.Unlock()
	}
	s := toStatus(out)
	s.Objects = len(res.Objects())
	s.EventInstances = instances
	if out.RenderHash == res.Hash { // the record's rendering is this one
		s.Artifacts = artifactsOf(res)
	}
	return s
}

// render renders a profile for the cluster at rev; an event profile
// renders every instance (renderEvents).
func (p *clusterPass) render(ctx context.Context, rev *revision, prof *spec.Profile) (*render.Result, []status.EventInstance, error) {
	if prof.IsEventProfile() {
		er, err := p.renderEvents(ctx, rev, prof)
		return er.res, er.instances, err
	}
	res, err := p.r.opts.Renderer.Render(ctx, render.Request{FS: rev.tree, Revision: rev.sha, Profile: prof,
		Cluster: p.renderFacts(), TreeHash: treeHasher(rev.tree)})
	return res, nil, err
}

// request builds the apply request of a rendered profile. Its objects are
// the render cache's, shared and read-only: apply copies them before it
// sets labels or applies (apply.Request.prepare).
func (p *clusterPass) request(rev *revision, prof *spec.Profile, res *render.Result) (apply.Request, error) {
	hc, err := newHealthChecker(p.r.opts.Lua, rev.tree, prof)
	if err != nil {
		return apply.Request{}, err
	}
	timeout := p.r.opts.HealthTimeout
	if prof.Spec.HealthTimeout != "" {
		timeout, _ = time.ParseDuration(prof.Spec.HealthTimeout) // validated by spec
	}
	req := apply.Request{Profile: prof.Metadata.Name, Tier: new(prof.Tier()), Revision: rev.sha, RenderHash: res.Hash,
		SyncMode: prof.Spec.SyncMode, StopMatchingBehavior: prof.Spec.StopMatchingBehavior,
		ContinueOnError: prof.Spec.ContinueOnError, HealthTimeout: timeout,
		DriftExclusions: prof.Spec.DriftExclusions, Health: hc, Async: true, Stop: p.stopped,
		SkipUnchanged: prof.IsEventProfile()}
	for _, st := range res.Steps {
		step := apply.Step{
			Addon:     st.Addon,
			Phase:     apply.Phase(st.Phase),
			Weight:    st.Weight,
			Namespace: st.Namespace,
			NoWait:    st.NoWait,
		}
		for _, o := range st.Objects {
			step.Objects = append(step.Objects, o.Unstructured)
		}
		req.Steps = append(req.Steps, step)
	}
	return req, nil
}

// toWithdraw returns the inventories of profiles the cluster holds that no
// longer select it, in withdrawal order. Any doubt — an inventory that
// cannot be read — withdraws nothing.
func (p *clusterPass) toWithdraw(ctx context.Context, a plan.Assignment) []*apply.Inventory {
	invs, err := p.cl.Inventories(ctx)
	if err != nil {
		p.log.Warn("cannot read inventories; nothing withdrawn this pass", "error", err)
		return nil
	}
	p.inventories = make(map[string]*apply.Inventory, len(invs))
	for _, inv := range invs {
		p.inventories[inv.Profile] = inv
	}
	matched := map[string]bool{}
	for _, prof := range a.Profiles() {
		matched[prof.Metadata.Name] = true
	}
	for _, inv := range invs {
		if p.refusedOwner(inv) {
			matched[inv.Profile] = true // nothing of a refused tenant is withdrawn
		}
	}
	return withdrawOrder(p.rev.repo, invs, matched)
}

// refusedOwner reports whether an inventory was written as a tenant whose
// folder does not load at the revision.
func (p *clusterPass) refusedOwner(inv *apply.Inventory) bool {
	for _, rt := range p.rev.repo.Refused {
		if rt.Writes(inv.Impersonate) {
			return true
		}
	}
	return false
}

// withdraw removes the given profiles from the cluster, dependents first,
// as each profile's stopMatchingBehavior says. It runs after the matched
// profiles were applied, so objects a replacing profile took over stay.
func (p *clusterPass) withdraw(ctx context.Context, gone []*apply.Inventory) {
	for _, inv := range gone {
		behavior := inv.StopMatchingBehavior
		if prof := p.rev.repo.Profile(inv.Profile); prof != nil {
			behavior = prof.Spec.StopMatchingBehavior
		}
		p.log.Info("profile no longer selects the cluster; withdrawing", "profile", inv.Profile, "behavior", behavior)
		res := p.cl.Withdraw(ctx, inv.Profile, behavior)
		p.r.countApply(res)
		p.setResult(toStatus(res))
	}
}
