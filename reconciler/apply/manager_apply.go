package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/spec"
)

// Apply makes the cluster hold what the request renders for one profile and
// returns the pass's Result; errors are in the Result, wrapped with cluster
// and profile. See the package documentation for the semantics.
func (c *Cluster) Apply(ctx context.Context, req Request) (res Result) {
	start := time.Now()
	res = newResult(c.name, req)
	if err := req.validate(); err != nil {
		res.fail(err)
		return res
	}
	defer c.lockProfile(req.Profile)()
	if !req.detectsDrift() {
		c.untrackDrift(req.Profile) // e.g. switched to DryRun: change nothing
	}
	p := c.newPass(req, &res)
	if err := p.impersonate(); err != nil {
		res.fail(err)
		return res
	}
	inv, err := req.Inventory, error(nil)
	if !req.Listed {
		inv, err = readInventory(ctx, p.cl.Kube, c.fleet(), req.Profile)
	}
	switch {
	case err != nil:
		res.fail(unreachable(ctx, c.name, err))
	case req.syncMode() == spec.SyncModeDryRun:
		p.dryRun(ctx, inv)
	case c.canSkip(req, inv):
		p.skip(inv)
	case c.canRestore(req, inv):
		p.restore(ctx, inv)
	default:
		p.run(ctx, inv)
	}
	res.DriftCorrections = c.driftCorrections(req.Profile)
	res.Duration = time.Since(start)
	c.log().Info("apply", "profile", req.Profile, "state", res.State, "created", res.Counts.Created,
		"configured", res.Counts.Configured, "deleted", res.Counts.Deleted, "skipped", res.Skipped,
		"duration", res.Duration, "error", res.Error)
	return res
}

// canSkip reports whether the pass has nothing to do: a OneTime profile
// already applied, or the same render hash applied and healthy with no
// drift pending.
func (c *Cluster) canSkip(req Request, inv *Inventory) bool {
	if inv == nil || !inv.Complete {
		return false
	}
	if req.syncMode() == spec.SyncModeOneTime {
		return true
	}
	st := c.state(req.Profile)
	if c.driftUnsettled(req) {
		return false
	}
	return st != nil && st.healthy && req.RenderHash != "" && st.renderHash == req.RenderHash &&
		inv.RenderHash == req.RenderHash && inv.SyncMode == req.syncMode() && inv.Tier == req.tier()
}

// canRestore reports whether a profile this Manager has not seen (the
// daemon restarted) holds, by its inventory, a complete and healthy pass of
// the same render, sync mode and tier: it is then taken as applied without
// a request (restore).
func (c *Cluster) canRestore(req Request, inv *Inventory) bool {
	return !c.sawProfile(req.Profile) && inv != nil && inv.Complete && req.RenderHash != "" && inv.RenderHash == req.RenderHash &&
		inv.SyncMode == req.syncMode() && inv.Tier == req.tier()
}

// pass is the state of one Apply call.
type pass struct {
	c  *Cluster
	cl *Client
	// writer applies and prunes objects: cl, or cl impersonating the
	// request's user.
	writer *Client
	req    Request
	res    *Result
	// rm dry-runs objects, as writer.
	rm       *ssa.ResourceManager
	health   *healthReader
	rules    []jsondiff.IgnoreRule
	compiled jsondiff.CompiledIgnoreRules

	prev *Inventory
	// base is what the previous pass applied that this one may skip;
	// hashes are this pass's (see manager_unchanged.go).
	base   appliedSet
	hashes appliedSet
	// confirm: this Manager has no previous pass of the profile to
	// compare with; of the objects the inventory lists, those a
	// continuing one would skip are compared with the cluster instead
	// (see manager_unchanged.go).
	confirm     map[ObjectRef]bool
	stepOpts    ssa.ApplyOptions // of the step being applied
	takeovers   map[ObjectRef]string
	labelled    map[ObjectRef]string // exist with a profile label: resourceVersion as listed ("" unknown)
	attempted   []InventoryEntry     // in apply order, conflicts excluded
	tracked     []*unstructured.Unstructured
	applyErrs   []error
	healthErrs  []error
	conflicts   []error
	reachedLast bool
	// resume is the step an Async pass resumes at; stopped is set when the
	// pass ended early at a step waiting for health, or by Request.Stop.
	resume  int
	stopped bool
	// awaited is the step an Async pass re-checks instead of applying
	// (see manager_recheck.go).
	awaited *awaiting
	current sync.Map // object.ObjMetadata -> true: healthy as applied
	gens    sync.Map // object.ObjMetadata -> int64: generation as applied
	// versions are the resourceVersions this pass's applies left, by
	// ObjectRef key: the drift watcher finds those objects in sync there.
	versions sync.Map
}

func (c *Cluster) newPass(req Request, res *Result) *pass {
	cl := c.currentClient()
	h := newHealthReader(cl.Mapper, req.Health, c.log().With("profile", req.Profile))
	rm := resourceManager(cl.Kube, c.m.opts.Concurrency)
	return &pass{c: c, cl: cl, writer: cl, req: req, res: res, rm: rm, health: h,
		rules: ignoreRules(req.DriftExclusions), takeovers: map[ObjectRef]string{}, labelled: map[ObjectRef]string{}}
}

// ignoreRules converts drift exclusions to ssa's ignore rules.
func ignoreRules(exclusions []spec.DriftExclusion) []jsondiff.IgnoreRule {
	var rules []jsondiff.IgnoreRule
	for _, ex := range exclusions {
		rule := jsondiff.IgnoreRule{Paths: ex.Paths}
		if t := ex.Target; t != nil {
			rule.Selector = &jsondiff.Selector{Group: t.Group, Version: t.Version, Kind: t.Kind,
				Name: t.Name, Namespace: t.Namespace, LabelSelector: t.LabelSelector,
				AnnotationSelector: t.AnnotationSelector}
		}
		rules = append(rules, rule)
	}
	return rules
}

// skip reports a pair with nothing to do. A OneTime pair reports the
// revision and render it was applied with: that is what the cluster holds.
func (p *pass) skip(inv *Inventory) {
	p.res.State, p.res.Skipped = StateApplied, true
	if st := p.c.state(p.req.Profile); st != nil {
		p.res.Health = st.health
	} else {
		p.res.Health = inv.Health
	}
	if p.req.syncMode() == spec.SyncModeOneTime {
		p.res.Revision, p.res.RenderHash = inv.Revision, inv.RenderHash
	}
}

// restore takes a pair's complete inventory as what this Manager applied
// (see canRestore): no request is sent, and a drift-detected profile's
// objects are tracked again, so its watches compare them with the cluster
// once and correct what drifted while no daemon ran.
func (p *pass) restore(ctx context.Context, inv *Inventory) {
	if p.req.detectsDrift() {
		steps, err := p.prepareAll()
		if err != nil {
			p.res.fail(err)
			return
		}
		keys := inv.keys()
		var objs []*unstructured.Unstructured
		for _, o := range flatten(steps) {
			if keys[RefOf(o).key()] {
				objs = append(objs, o)
			}
		}
		p.c.trackDrift(p.req.Profile, p.req.Impersonate, objs, p.rules, nil)
	}
	p.c.setState(p.req.Profile, &profileState{renderHash: inv.RenderHash, healthy: true, health: inv.Health})
	p.res.State, p.res.Skipped, p.res.Health = StateApplied, true, inv.Health
}

// run is a full pass: record intent, apply steps, prune, record result.
func (p *pass) run(ctx context.Context, inv *Inventory) {
	p.prev = inv
	steps, err := p.prepareAll()
	if err != nil {
		p.res.fail(err)
		return
	}
	if err := p.leaveExisting(ctx, inv, steps, p.res.record); err != nil {
		p.res.fail(unreachable(ctx, p.c.name, err))
		return
	}
	p.resume = 0
	if p.req.Async {
		p.resume = p.c.resumeAt(p.req)
		p.awaited = p.c.awaitedUnchanged(p.req, inv, steps)
	} else {
		p.c.stopAwaiting(p.req.Profile)
	}
	if p.req.skipsUnchanged() {
		p.base, p.hashes = p.c.unchangedBase(p.req, inv), appliedSet{}
		if p.base == nil && inv != nil && !p.c.sawProfile(p.req.Profile) {
			p.confirm = inv.keys()
		}
	}
	// Until this pass finishes, nothing is known to be applied and healthy;
	// drift correction pauses so it does not restore the previous render.
	p.c.setState(p.req.Profile, nil)
	p.c.untrackDrift(p.req.Profile)
	if p.req.detectsDrift() {
		p.c.expectDrift(p.req.Profile)
	}
	if err := p.recordIntent(ctx, inv, steps); err != nil {
		p.res.fail(unreachable(ctx, p.c.name, err))
		return
	}
	p.applySteps(ctx, steps)
	var prev []InventoryEntry
	if inv != nil {
		prev = inv.Objects
	}
	objects, pruneErr := p.pruneOrKeep(ctx, prev)
	p.finish(ctx, objects, pruneErr)
}

func (p *pass) prepareAll() ([][]desired, error) {
	compiled, err := compileRules(p.rules)
	if err != nil {
		return nil, fmt.Errorf("drift exclusions: %w", err)
	}
	p.compiled = compiled
	steps := make([][]desired, 0, len(p.req.Steps))
	for _, st := range p.req.Steps {
		ds, err := p.req.prepare(p.c.name, p.c.fleet(), st)
		if err != nil {
			return nil, &AddonError{Addon: st.Addon, Err: err}
		}
		placeInNamespace(p.cl.Mapper, st.Namespace, ds)
		steps = append(steps, ds)
	}
	return steps, nil
}

// recordIntent writes, before anything is created, an inventory that also
// lists the objects this pass may create, so a crash mid-pass leaves no
// object unknown to the next daemon.
func (p *pass) recordIntent(ctx context.Context, inv *Inventory, steps [][]desired) error {
	next := entriesOf(steps)
	if inv != nil && len(minus(next, inv.keys())) == 0 {
		return nil
	}
	intent := p.inventory(nil)
	intent.Complete, intent.RenderHash = false, ""
	if inv != nil {
		intent.RenderHash, intent.Revision = inv.RenderHash, inv.Revision
		intent.Objects = union(inv.Objects, next)
	} else {
		intent.Objects = next
	}
	if err := p.c.ensureInventoryNamespace(ctx, p.cl.Kube, inv != nil); err != nil {
		return err
	}
	if err := writeInventory(ctx, p.cl.Kube, p.c.fleet(), intent, &p.c.inventories); err != nil {
		return err
	}
	p.prev = intent // what the cluster holds now
	return nil
}

func entriesOf(steps [][]desired) []InventoryEntry {
	var out []InventoryEntry
	for _, st := range steps {
		for _, d := range st {
			out = append(out, InventoryEntry{ObjectRef: RefOf(d.obj), Addon: d.addon})
		}
	}
	return out
}

func (p *pass) inventory(objects []InventoryEntry) *Inventory {
	return &Inventory{Profile: p.req.Profile, Revision: p.req.Revision, RenderHash: p.req.RenderHash,
		SyncMode: p.req.syncMode(), StopMatchingBehavior: p.req.StopMatchingBehavior, Tier: p.req.tier(),
		Impersonate: p.req.Impersonate, Objects: objects}
}

// applySteps applies the steps in order, each healthy before the next; the
// first failure stops unless ContinueOnError.
// With Request.Async, the steps before the one the pass resumes at were
// applied at this render and became healthy: they are taken as they are;
// a step that is not healthy yet ends the pass (errAwaiting).
func (p *pass) applySteps(ctx context.Context, steps [][]desired) {
	for i, st := range steps {
		if i < p.resume {
			p.keepStep(st)
			continue
		}
		if p.req.Stop != nil && p.req.Stop() {
			p.stopped = true
			p.res.Waiting = "superseded by a newer revision before add-on " + p.req.Steps[i].Addon
			return
		}
		err := p.applyStep(ctx, i, p.req.Steps[i], st)
		if errors.Is(err, errAwaiting) {
			p.stopped = true
			return
		}
		if err != nil && !p.req.ContinueOnError {
			return
		}
	}
	p.reachedLast = true
}

// keepStep counts a step applied and healthy at this render in an earlier
// Apply as part of this one, without a request.
func (p *pass) keepStep(st []desired) {
	p.keep(st)
	p.res.Health.Healthy += len(st)
}

// applyStep resolves conflicts, applies the step's objects in stages and
// waits for their health.
func (p *pass) applyStep(ctx context.Context, i int, step Step, st []desired) error {
	if p.awaited != nil && p.awaited.step == i {
		return p.recheck(ctx, i, step, st)
	}
	addon := step.Addon
	p.stepOpts = p.applyOptions(step.Phase)
	if st = p.splitUnchanged(ctx, st); len(st) == 0 {
		return nil
	}
	objs, err := p.resolveConflicts(ctx, st)
	if err != nil {
		err = stepError(step, err)
		p.applyErrs = append(p.applyErrs, err)
		return err
	}
	for _, o := range objs {
		p.attempted = append(p.attempted, InventoryEntry{ObjectRef: RefOf(o), Addon: addon})
	}
	start := time.Now()
	cs, err := p.applyStaged(ctx, objs)
	p.recordChanges(addon, cs)
	if err != nil {
		err = stepError(step, err)
		p.applyErrs = append(p.applyErrs, err)
		return err
	}
	p.tracked = append(p.tracked, objs...)
	applied := time.Since(start)
	if step.NoWait {
		return nil
	}
	if p.req.Async {
		err = p.observe(ctx, i, objs, changedAny(cs))
	} else {
		err = p.wait(ctx, objs)
	}
	if errors.Is(err, errAwaiting) {
		return err
	}
	p.c.log().Debug("add-on applied", "profile", p.req.Profile, "addon", addon, "objects", len(objs),
		"apply", applied, "wait", time.Since(start)-applied)
	if err != nil {
		err = stepError(step, err)
		p.healthErrs = append(p.healthErrs, err)
		return err
	}
	return nil
}

// stepError is err of a step's add-on, with its phase and weight.
func stepError(step Step, err error) error {
	return &AddonError{Addon: step.Addon, Phase: step.Phase, Weight: step.Weight, Err: err}
}

// changedAny reports whether a change set created or configured an object.
func changedAny(cs *ssa.ChangeSet) bool {
	for _, e := range cs.Entries {
		if e.Action == ssa.CreatedAction || e.Action == ssa.ConfiguredAction {
			return true
		}
	}
	return false
}

// applyOptions are ssa's apply options of the pass. Steps of Helm hook
// phases (pre, post) recreate objects whose immutable fields changed (a
// hook Job), as Helm's before-hook-creation delete policy would.
func (p *pass) applyOptions(phase Phase) ssa.ApplyOptions {
	opts := ssa.DefaultApplyOptions()
	opts.Force = phase == PhasePre || phase == PhasePost
	opts.WaitInterval = p.c.m.opts.HealthPollInterval
	opts.WaitTimeout = p.c.m.opts.StageTimeout
	opts.DriftIgnoreRules = p.rules
	return opts
}

func (p *pass) recordChanges(addon string, cs *ssa.ChangeSet) {
	if cs == nil {
		return
	}
	for _, e := range cs.Entries {
		ref := ObjectRef{Group: e.ObjMetadata.GroupKind.Group, Version: e.GroupVersion,
			Kind: e.ObjMetadata.GroupKind.Kind, Namespace: e.ObjMetadata.Namespace, Name: e.ObjMetadata.Name}
		p.res.record(ObjectChange{Object: ref, Addon: addon, Action: Action(e.Action),
			Message: p.takeovers[ref.key()]})
	}
}

// wait waits until the objects are healthy, or the health timeout.
func (p *pass) wait(ctx context.Context, objs []*unstructured.Unstructured) error {
	ids := object.UnstructuredSetToObjMetadataSet(objs)
	timeout := p.healthTimeout()
	err := p.waitHealth(ctx, p.notCurrent(ids), timeout)
	hs, degraded := p.health.summary(ids)
	p.res.Health.merge(hs)
	if err != nil {
		return &HealthError{Degraded: degraded, Timeout: timeout, Unhealthy: hs.Unhealthy, Err: err}
	}
	return nil
}

// pruneOrKeep prunes what the new render dropped when every step was
// applied without error, and returns the objects of the new inventory.
func (p *pass) pruneOrKeep(ctx context.Context, prev []InventoryEntry) ([]InventoryEntry, error) {
	if !p.reachedLast || len(p.applyErrs) > 0 || ctx.Err() != nil {
		return union(prev, p.attempted), nil
	}
	kept, err := p.pruner().prune(ctx, minus(prev, keysOf(p.attempted, p.conflictKeys())), p.res.record)
	return append(kept, p.attempted...), err
}

func keysOf(entries []InventoryEntry, extra map[ObjectRef]bool) map[ObjectRef]bool {
	set := make(map[ObjectRef]bool, len(entries)+len(extra))
	for _, e := range entries {
		set[e.key()] = true
	}
	for k := range extra {
		set[k] = true
	}
	return set
}

// finish writes the inventory, sets the state and remembers the pass.
func (p *pass) finish(ctx context.Context, objects []InventoryEntry, pruneErr error) {
	errs := append(append([]error(nil), p.applyErrs...), p.healthErrs...)
	if pruneErr != nil {
		errs = append(errs, pruneErr)
	}
	p.setState(ctx, errs, pruneErr == nil && p.onlyProgressing(ctx))
	inv := p.inventory(objects)
	inv.Complete = p.res.State == StateApplied
	if inv.Complete {
		inv.Health = p.res.Health.counts()
	}
	if err := p.writeIfChanged(ctx, inv); err != nil {
		p.res.fail(unreachable(ctx, p.c.name, errors.Join(append(errs, err)...)))
	}
	p.c.setState(p.req.Profile, &profileState{renderHash: p.req.RenderHash,
		healthy: p.res.State == StateApplied, health: p.res.Health, applied: p.appliedHashes()})
	if p.req.detectsDrift() {
		p.c.trackDrift(p.req.Profile, p.req.Impersonate, p.tracked, p.rules, p.appliedVersions())
	}
}

// appliedVersions are the resourceVersions this pass's applies left.
func (p *pass) appliedVersions() map[ObjectRef]string {
	out := map[ObjectRef]string{}
	p.versions.Range(func(k, v any) bool {
		out[k.(ObjectRef)] = v.(string)
		return true
	})
	return out
}

// writeIfChanged writes the inventory unless the cluster holds it already.
func (p *pass) writeIfChanged(ctx context.Context, inv *Inventory) error {
	if p.prev != nil && equalInventories(p.prev, inv) {
		return nil
	}
	return writeInventory(ctx, p.cl.Kube, p.c.fleet(), inv, &p.c.inventories)
}

func (p *pass) setState(ctx context.Context, errs []error, progressing bool) {
	switch {
	case len(errs) == 0 && p.stopped:
		p.res.State = StateProgressing
	case len(errs) > 0 && progressing:
		p.res.State = StateProgressing
		p.res.setErr(errors.Join(errs...))
	case len(errs) > 0:
		p.res.fail(unreachable(ctx, p.c.name, errors.Join(errs...)))
	case len(p.conflicts) > 0:
		p.res.State = StateConflict
		p.res.setErr(errors.Join(p.conflicts...))
	default:
		p.res.State = StateApplied
	}
}

// onlyProgressing is true when every error is a health wait that timed out
// with nothing degraded.
func (p *pass) onlyProgressing(ctx context.Context) bool {
	if ctx.Err() != nil || len(p.applyErrs) > 0 || len(p.healthErrs) == 0 || p.req.Async {
		return false // Async: the health deadline passed, the pair is Failed
	}
	for _, err := range p.healthErrs {
		var he *HealthError
		if !errors.As(err, &he) || he.Degraded {
			return false
		}
	}
	return true
}
