package apply

import (
	"context"
	"errors"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// dryRun computes what a Continuous pass would do, per object, by
// server-side dry-run apply; it writes nothing, not even the inventory.
func (p *pass) dryRun(ctx context.Context, inv *Inventory) {
	steps, err := p.prepareAll()
	if err != nil {
		p.res.fail(err)
		return
	}
	if err := p.leaveExisting(ctx, inv, steps, p.recordDryRun); err != nil {
		p.res.fail(unreachable(ctx, p.c.name, err))
		return
	}
	all := flatten(steps)
	var errs []error
	for i, st := range steps {
		objs, err := p.resolveConflicts(ctx, st)
		if err != nil {
			errs = append(errs, &AddonError{Addon: p.req.Steps[i].Addon, Err: err})
			continue
		}
		if err := p.diffStep(ctx, p.req.Steps[i].Addon, objs, all); err != nil {
			errs = append(errs, &AddonError{Addon: p.req.Steps[i].Addon, Err: err})
		}
	}
	if inv != nil {
		errs = append(errs, p.wouldPrune(ctx, minus(inv.Objects, keysOf(entriesOf(steps), nil))))
	}
	p.res.State = StateDryRun
	if err := errors.Join(errs...); err != nil {
		p.res.fail(unreachable(ctx, p.c.name, err))
	}
}

func flatten(steps [][]desired) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, st := range steps {
		for _, d := range st {
			out = append(out, d.obj)
		}
	}
	return out
}

// diffStep dry-runs the step's objects in parallel and records one change
// per object, in the step's order.
func (p *pass) diffStep(ctx context.Context, addon string, objs, all []*unstructured.Unstructured) error {
	changes := make([]ObjectChange, len(objs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.c.m.opts.Concurrency)
	for i, obj := range objs {
		g.Go(func() error {
			ch, err := p.diff(gctx, obj, all)
			ch.Addon = addon
			changes[i] = ch
			return err
		})
	}
	err := g.Wait()
	for _, ch := range changes {
		if ch.Action != "" {
			p.recordDryRun(ch)
		}
	}
	return err
}

func (p *pass) recordDryRun(ch ObjectChange) {
	p.res.Counts.add(ch.Action)
	p.res.Changes = append(p.res.Changes, ch)
}

// diff dry-runs one object. An object whose CRD or Namespace does not exist
// yet but is part of the render would be created.
func (p *pass) diff(ctx context.Context, obj *unstructured.Unstructured, all []*unstructured.Unstructured) (ObjectChange, error) {
	ch := ObjectChange{Object: RefOf(obj), Message: p.takeovers[RefOf(obj).key()]}
	entry, live, merged, err := p.rm.Diff(ctx, obj.DeepCopy(), ssa.DiffOptions{DriftIgnoreRules: p.rules})
	if err != nil {
		if createdWithRender(err, obj, all) {
			ch.Action = ActionCreated
			return ch, nil
		}
		return ObjectChange{}, err
	}
	ch.Action = Action(entry.Action)
	if entry.Action == ssa.ConfiguredAction && live != nil && merged != nil {
		ch.Diff, err = unifiedDiff(ch.Object.String(), live, merged)
	}
	return ch, err
}

// createdWithRender reports whether a dry-run failed only because the
// object's CRD or Namespace is created by the same render.
func createdWithRender(err error, obj *unstructured.Unstructured, all []*unstructured.Unstructured) bool {
	gk := obj.GroupVersionKind().GroupKind()
	for _, o := range all {
		switch {
		case meta.IsNoMatchError(err) && utils.IsCRD(o) && crdDefines(o, gk):
			return true
		case apierrors.IsNotFound(err) && utils.IsNamespace(o) && o.GetName() == obj.GetNamespace():
			return true
		}
	}
	return false
}

func crdDefines(crd *unstructured.Unstructured, gk schema.GroupKind) bool {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	return group == gk.Group && kind == gk.Kind
}

// wouldPrune reports the deletions a Continuous pass would make.
func (p *pass) wouldPrune(ctx context.Context, entries []InventoryEntry) error {
	pr := p.pruner()
	var errs []error
	for _, e := range deleteOrder(entries) {
		ch, err := pr.delete(ctx, e, true)
		switch {
		case err != nil:
			errs = append(errs, err)
		case ch.Message != msgGone:
			p.recordDryRun(ch)
		}
	}
	return errors.Join(errs...)
}
