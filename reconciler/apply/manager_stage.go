package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	"github.com/fluxcd/pkg/ssa/utils"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// applyStaged applies CRDs, Namespaces and ClusterRoles first and waits for
// them, then class definitions likewise, then the rest: the stages of ssa's
// ApplyAllStaged, with waits that honour ctx.
func (p *pass) applyStaged(ctx context.Context, objs []*unstructured.Unstructured) (*ssa.ChangeSet, error) {
	var defs, classes, rest []*unstructured.Unstructured
	for _, o := range objs {
		switch {
		case utils.IsClusterDefinition(o):
			defs = append(defs, o)
		case utils.IsClassDefinition(o):
			classes = append(classes, o)
		default:
			rest = append(rest, o)
		}
	}
	cs := ssa.NewChangeSet()
	for _, stage := range [][]*unstructured.Unstructured{defs, classes} {
		if err := p.applyAndSettle(ctx, stage, cs); err != nil {
			return cs, err
		}
	}
	var first, last []*unstructured.Unstructured
	for _, o := range rest {
		if isWebhookConfiguration(o) {
			last = append(last, o) // ssa's order puts them last
		} else {
			first = append(first, o)
		}
	}
	if err := p.applySet(ctx, first, cs); err != nil {
		return cs, err
	}
	return cs, p.applySet(ctx, last, cs)
}

func isWebhookConfiguration(o *unstructured.Unstructured) bool {
	k := o.GetKind()
	return k == "MutatingWebhookConfiguration" || k == "ValidatingWebhookConfiguration"
}

func (p *pass) applyAndSettle(ctx context.Context, stage []*unstructured.Unstructured, cs *ssa.ChangeSet) error {
	if len(stage) == 0 {
		return nil
	}
	s := ssa.NewChangeSet()
	if err := p.applySet(ctx, stage, s); err != nil {
		return err
	}
	cs.Append(s.Entries)
	if err := p.waitHealth(ctx, p.notCurrent(s.ToObjMetadataSet()), p.c.m.opts.StageTimeout); err != nil {
		return fmt.Errorf("waiting for definitions: %w", err)
	}
	return p.waitServed(ctx, stage)
}

// waitServed waits until the kinds the CRDs among objs define are served
// (the RESTMapper finds them). A CRD is Established a moment before
// discovery lists its kind; the health watch sees it at once, where a poll
// used to be late enough.
func (p *pass) waitServed(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != crdKind {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		gk := schema.GroupKind{Group: group, Kind: kind}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, p.c.m.opts.StageTimeout, true,
			func(context.Context) (bool, error) {
				_, err := p.cl.Mapper.RESTMapping(gk)
				return err == nil, nil
			})
		if err != nil {
			return fmt.Errorf("waiting for definitions: kind %s not served: %w", gk, err)
		}
	}
	return nil
}

var crdKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// applySet applies objects with one server-side apply each (applyFresh).
// Two kinds of existing objects take ssa's ApplyAll instead (GET, dry-run,
// apply when drifted): those a drift exclusion selects, whose excluded
// fields ssa keeps, and those of a step that re-creates what it cannot
// change (Force, the Helm hook phases). An apply that changes nothing is
// no write: the API server keeps the object and its resourceVersion, which
// tells an unchanged object from a configured one (applyOne).
func (p *pass) applySet(ctx context.Context, objs []*unstructured.Unstructured, cs *ssa.ChangeSet) error {
	var compared, direct []*unstructured.Unstructured
	for _, o := range objs {
		_, labelled := p.labelled[RefOf(o).key()]
		if p.excluded(o) || labelled && p.stepOpts.Force {
			compared = append(compared, o)
		} else {
			direct = append(direct, o)
		}
	}
	return errors.Join(p.applyChunks(ctx, compared, cs), p.applyFresh(ctx, direct, cs))
}

// excluded reports whether a drift exclusion selects the object: ssa then
// keeps the excluded fields of an existing object, which applyFresh would
// overwrite.
func (p *pass) excluded(o *unstructured.Unstructured) bool {
	for sel := range p.compiled {
		if sel.MatchUnstructured(o) {
			return true
		}
	}
	return false
}

// applyChunks runs ssa's ApplyAll on parallel chunks: ApplyAll dry-runs
// concurrently but applies one object at a time, so one call per chunk keeps
// about Concurrency requests in flight throughout.
func (p *pass) applyChunks(ctx context.Context, objs []*unstructured.Unstructured, cs *ssa.ChangeSet) error {
	if len(objs) == 0 {
		return nil
	}
	sort.Sort(ssa.SortableUnstructureds(objs))
	conc := p.c.m.opts.Concurrency
	chunks := min((len(objs)+minChunk-1)/minChunk, max(1, conc/2))
	sets := make([]*ssa.ChangeSet, chunks)
	errs := make([]error, chunks)
	var wg sync.WaitGroup
	for i := range chunks {
		rm := resourceManager(p.writer.Kube, max(1, conc/chunks))
		wg.Go(func() { sets[i], errs[i] = rm.ApplyAll(ctx, chunk(objs, i, chunks), p.stepOpts) })
	}
	wg.Wait()
	for _, s := range sets {
		if s != nil {
			cs.Append(s.Entries)
		}
	}
	return errors.Join(errs...)
}

// minChunk is the smallest number of objects worth a parallel ApplyAll.
const minChunk = 8

// chunk returns every n-th object starting at i, keeping ssa's kind order
// within the chunk.
func chunk(objs []*unstructured.Unstructured, i, n int) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for j := i; j < len(objs); j += n {
		out = append(out, objs[j])
	}
	return out
}

// applyFresh applies objects with one server-side apply each, Concurrency
// in flight. ssa's GET and dry-run would triple the requests of a first
// rollout (a new object has nothing to compare with) and double those of a
// change, only to move a validation error earlier and to spare the apply
// of an unchanged object, which the API server does not write anyway.
// Concurrency workers take the objects in turn (no shared cancel: every
// object gets its answer); a goroutine per object would grow a fresh stack
// through JSON and HTTP/2 for each.
func (p *pass) applyFresh(ctx context.Context, objs []*unstructured.Unstructured, cs *ssa.ChangeSet) error {
	entries := make([]*ssa.ChangeSetEntry, len(objs))
	errs := make([]error, len(objs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(p.c.m.opts.Concurrency, len(objs)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(objs); i = int(next.Add(1) - 1) {
				entries[i], errs[i] = p.applyOne(ctx, objs[i])
			}
		})
	}
	wg.Wait()
	for _, e := range entries {
		if e != nil {
			cs.Add(*e)
		}
	}
	return errors.Join(errs...)
}

func (p *pass) applyOne(ctx context.Context, o *unstructured.Unstructured) (*ssa.ChangeSetEntry, error) {
	rv, adopted, err := p.applyAndNote(ctx, o)
	if err != nil {
		return nil, &ObjectError{Object: RefOf(o), Op: "apply", Err: err}
	}
	if rv != "" && p.req.detectsDrift() {
		p.versions.Store(RefOf(o).key(), rv) // for the drift watcher only
	}
	return &ssa.ChangeSetEntry{ObjMetadata: object.UnstructuredToObjMetadata(o),
		GroupVersion: o.GroupVersionKind().Version, Subject: utils.FmtUnstructured(o), Action: p.actionOf(o, rv, adopted)}, nil
}

// actionOf is what applying o did, given the resourceVersion the apply
// returned and whether the object existed before: an object listed with a
// profile label is unchanged when the apply left its resourceVersion.
func (p *pass) actionOf(o *unstructured.Unstructured, rv string, adopted bool) ssa.Action {
	listed, labelled := p.labelled[RefOf(o).key()]
	switch {
	case labelled && listed != "" && listed == rv:
		return ssa.UnchangedAction
	case labelled || adopted:
		return ssa.ConfiguredAction
	default:
		return ssa.CreatedAction
	}
}

// applyAndNote applies o, notes whether it is healthy as applied and
// returns the resourceVersion the apply left and whether the object existed
// before. Objects whose health their metadata tells are applied for their
// metadata only (applyForMetadata).
func (p *pass) applyAndNote(ctx context.Context, o *unstructured.Unstructured) (string, bool, error) {
	if p.metadataOnly(o) {
		m, err := applyForMetadata(ctx, p.writer.Kube, o)
		if err != nil {
			return "", false, err
		}
		if m.GetDeletionTimestamp() == nil {
			p.current.Store(object.UnstructuredToObjMetadata(o), true)
		}
		return m.GetResourceVersion(), adoptedFields(m.GetManagedFields()), nil
	}
	obj := o.DeepCopy()
	utils.RemoveCABundleFromCRD(obj)
	if err := applyObject(ctx, p.writer.Kube, obj); err != nil {
		return "", false, err
	}
	p.gens.Store(object.UnstructuredToObjMetadata(obj), obj.GetGeneration())
	p.noteCurrent(ctx, obj)
	return obj.GetResourceVersion(), adoptedFields(obj.GetManagedFields()), nil
}

// compile compiles the pass's drift exclusions once.
func compileRules(rules []jsondiff.IgnoreRule) (jsondiff.CompiledIgnoreRules, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	return jsondiff.CompileIgnoreRules(rules)
}

// noteCurrent records an applied object that is healthy as the server
// returned it (kstatus Current, or its health override says Healthy).
func (p *pass) noteCurrent(ctx context.Context, obj *unstructured.Unstructured) {
	id := object.UnstructuredToObjMetadata(obj)
	if p.health.checker != nil {
		if st, _, ok, err := p.health.checker.Check(ctx, obj); ok || err != nil {
			if err == nil && st == HealthHealthy {
				p.current.Store(id, true)
			}
			return
		}
	}
	if res, err := kstatus.Compute(obj); err == nil && res.Status == kstatus.CurrentStatus {
		p.current.Store(id, true)
	}
}

// notCurrent returns the ids not known to be healthy yet; the others are
// recorded as healthy for the summary.
func (p *pass) notCurrent(ids object.ObjMetadataSet) object.ObjMetadataSet {
	var out object.ObjMetadataSet
	for _, id := range ids {
		if _, ok := p.current.Load(id); ok {
			p.health.mu.Lock()
			p.health.last[id] = &event.ResourceStatus{Identifier: id, Status: kstatus.CurrentStatus}
			p.health.mu.Unlock()
			continue
		}
		out = append(out, id)
	}
	return out
}
