package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// trackDrift hands a profile's applied objects to the cluster's drift
// watcher, starting it on first use. A watcher that cannot track the profile
// makes the next pass re-apply instead of skipping.
// Corrections are written as user (a tenant's ServiceAccount) when set;
// applied are the resourceVersions the pass's applies left (see Track).
func (c *Cluster) trackDrift(profile, user string, objs []*unstructured.Unstructured, rules []jsondiff.IgnoreRule,
	applied map[ObjectRef]string) {
	if c.m.ctx.Err() != nil {
		return // the Manager is closed
	}
	if err := c.driftWatcher().Track(profile, user, objs, rules, applied); err != nil {
		c.log().Error("drift tracking failed", "profile", profile, "error", err)
		c.setState(profile, nil)
	}
}

// expectDrift tells the drift watcher, started here on first use, that a
// drift-detected profile is being applied.
func (c *Cluster) expectDrift(profile string) {
	if c.m.ctx.Err() != nil {
		return // the Manager is closed
	}
	c.driftWatcher().Expect(profile)
}

// ScopeDrift tells the drift watches the cluster's drift-detected profiles
// before a pass applies any of them (DriftWatcher.Scope); with none and no
// watcher yet it starts nothing.
func (c *Cluster) ScopeDrift(profiles []string) {
	if c.m.ctx.Err() != nil || len(profiles) == 0 && c.watcher() == nil {
		return
	}
	c.driftWatcher().Scope(profiles)
}

// driftWatcher returns the cluster's drift watcher, resuming a held one
// (only a pass that applies calls it, after its entry was confirmed) or
// starting a new one.
func (c *Cluster) driftWatcher() *DriftWatcher {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resumeDrift()
	if c.drift == nil {
		c.drift = newDriftWatcher(c.m.ctx, c.name, c.namespaces, c.client, c.m.opts)
	}
	return c.drift
}

// Drift returns the cluster's drift watcher, nil until a
// ContinuousWithDriftDetection profile is applied (or after Pause).
func (c *Cluster) Drift() *DriftWatcher { return c.watcher() }

func (c *Cluster) watcher() *DriftWatcher {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drift
}

func (c *Cluster) untrackDrift(profile string) {
	if w := c.watcher(); w != nil {
		w.Untrack(profile)
	}
}

func (c *Cluster) driftTracked(profile string) bool {
	w := c.watcher()
	return w != nil && w.Tracked(profile)
}

func (c *Cluster) driftPending(profile string) bool {
	w := c.watcher()
	return w != nil && w.Pending(profile)
}

// driftUnsettled reports whether a drift-detected profile's objects are
// not known in sync: its watches do not track them, or a correction is
// pending. A pass may then skip nothing.
func (c *Cluster) driftUnsettled(req Request) bool {
	return req.detectsDrift() && (!c.driftTracked(req.Profile) || c.driftPending(req.Profile))
}

// DriftCorrections returns the drift corrections made for a pair since
// the Manager started (0 for a cluster it does not know).
func (m *Manager) DriftCorrections(cluster, profile string) int {
	m.mu.Lock()
	c := m.clusters[cluster]
	m.mu.Unlock()
	if c == nil {
		return 0
	}
	return c.driftCorrections(profile)
}

func (c *Cluster) driftCorrections(profile string) int {
	if w := c.watcher(); w != nil {
		return w.Corrections(profile)
	}
	return 0
}

// DriftCheck is the safety net run every --drift-interval, for changes a
// watch may have missed: it lists each tracked kind's metadata once, and
// compares with the desired state every tracked object whose
// resourceVersion is not the one it was last found in sync at (see
// desiredObject.synced); only those missing or different go to a
// server-side dry-run, which re-applies the ones that really drifted. A
// converged cluster costs one metadata LIST per kind, no object decoded
// and no writes. It returns the corrections made (also reported through
// Options.OnDrift).
func (c *Cluster) DriftCheck(ctx context.Context) ([]DriftEvent, error) {
	w := c.watcher()
	if w == nil {
		return nil, nil
	}
	live, err := w.listTracked(ctx)
	if err != nil {
		return nil, c.wrap(ctx, err)
	}
	var events []DriftEvent
	var errs []error
	for _, profile := range w.trackedProfiles() {
		unlock := c.lockProfile(profile)
		ev, err := w.check(ctx, profile, live)
		unlock()
		events = append(events, ev...)
		errs = append(errs, err)
	}
	return events, c.wrap(ctx, errors.Join(errs...))
}

func (w *DriftWatcher) trackedProfiles() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.profiles))
	for p := range w.profiles {
		out = append(out, p)
	}
	return out
}

// check compares a profile's tracked objects with their live state (one
// list per kind for the whole cluster) and dry-runs and re-applies only
// those missing or different; objects another profile owns now are
// forgotten. An object listed at the resourceVersion it was last in sync
// at is not compared again.
func (w *DriftWatcher) check(ctx context.Context, profile string, live *liveState) ([]DriftEvent, error) {
	desired, rules := w.snapshot(profile)
	compiled := w.compiled(profile)
	var drifted []*unstructured.Unstructured
	cl := newClaims(w.client.Kube, w.fleet)
	for _, td := range desired {
		if rv, ok := live.versions[td.ref]; ok && td.d.inSyncAt(rv) {
			continue
		}
		o, err := td.d.object()
		if err != nil {
			return nil, fmt.Errorf("profile %s: %s: %w", profile, td.ref, err)
		}
		l, err := w.liveOrGet(ctx, live.objects, td.ref, o.GroupVersionKind())
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", profile, err)
		}
		moved, err := w.movedTo(ctx, cl, profile, td.ref, l)
		switch {
		case err != nil:
			return nil, fmt.Errorf("profile %s: %w", profile, err)
		case moved:
			w.forget(driftKey{profile: profile, ref: td.ref})
		case l != nil && l.GetLabels()[LabelProfile] != profile, l != nil && !w.fleet.owns(l.GetLabels()):
			drifted = append(drifted, o) // relabelled: restore the labels
		case l != nil && (driftDisabled(l) || !differs(o, l, compiled)):
			td.d.markInSync(l.GetResourceVersion())
		default:
			drifted = append(drifted, o)
		}
	}
	if len(drifted) == 0 {
		return nil, nil
	}
	cs, err := w.rm.ApplyAll(ctx, drifted, driftApplyOptions(rules))
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", profile, err)
	}
	var events []DriftEvent
	for _, e := range cs.Entries {
		if e.Action != ssa.CreatedAction && e.Action != ssa.ConfiguredAction {
			continue
		}
		ref := ObjectRef{Group: e.ObjMetadata.GroupKind.Group, Version: e.GroupVersion, Kind: e.ObjMetadata.GroupKind.Kind,
			Namespace: e.ObjMetadata.Namespace, Name: e.ObjMetadata.Name}
		ev := DriftEvent{Cluster: w.cluster, Profile: profile, Object: ref, Action: Action(e.Action), Time: time.Now()}
		w.mu.Lock()
		w.counts[profile]++
		w.mu.Unlock()
		w.report(ev)
		events = append(events, ev)
	}
	return events, nil
}

func (w *DriftWatcher) compiled(profile string) jsondiff.CompiledIgnoreRules {
	w.mu.Lock()
	defer w.mu.Unlock()
	if dp := w.profiles[profile]; dp != nil {
		return dp.compiled
	}
	return nil
}

// liveOrGet returns the live object of ref from the drift check's lists,
// else from the API server: the lists select the watches' profiles, so an
// object relabelled to another profile (moved, or its labels edited) is
// not in them. nil when it is gone.
func (w *DriftWatcher) liveOrGet(ctx context.Context, live map[ObjectRef]*unstructured.Unstructured, ref ObjectRef,
	gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	if l := live[ref]; l != nil {
		return l, nil
	}
	return w.read(ctx, ref, gvk)
}

// liveState is what the drift check's lists found: the resourceVersion of
// every listed object, and the objects it has whole (from the watches'
// cache, or a full list).
type liveState struct {
	versions map[ObjectRef]string
	objects  map[ObjectRef]*unstructured.Unstructured
}

// listTracked lists the objects of the watches' profiles (the same
// selector), each kind a tracked profile has once (listKind).
func (w *DriftWatcher) listTracked(ctx context.Context) (*liveState, error) {
	w.watchMu.Lock()
	selector, err := labels.Parse(scopeSelector(w.scope))
	w.watchMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("drift check selector: %w", err)
	}
	w.mu.Lock()
	kinds := map[schema.GroupVersionKind]bool{}
	for _, dp := range w.profiles {
		for ref, d := range dp.objects {
			kinds[d.gvk(ref)] = true
		}
	}
	w.mu.Unlock()
	live := &liveState{versions: map[ObjectRef]string{}, objects: map[ObjectRef]*unstructured.Unstructured{}}
	for gvk := range kinds {
		if err := w.listKind(ctx, gvk, client.MatchingLabelsSelector{Selector: selector}, live); err != nil {
			return nil, err
		}
	}
	return live, nil
}

// maxStaleReads is how many objects of a kind the drift check reads one
// by one when they changed since they were last in sync and the watch's
// copy is not at their listed resourceVersion; past it the kind is listed
// in full.
const maxStaleReads = 4

// listKind adds a kind's objects to live. When the kind's watch has
// listed, it lists their metadata only: an object still at the
// resourceVersion it was last in sync at needs no comparison, and one the
// watch's cache holds whole at its listed resourceVersion is compared
// with that copy. The others are left for check to read (liveOrGet),
// unless more than maxStaleReads are, when the kind is listed in full: a
// watch that is behind costs one more list, not a read per object.
// Without a watch that has listed, the kind is listed in full, except
// without watches at all (intervalOnly), where the metadata list comes
// first as well: a converged cluster then costs no more than with
// watches. A namespace-scoped entry's kinds are listed in each of its
// namespaces.
func (w *DriftWatcher) listKind(ctx context.Context, gvk schema.GroupVersionKind, sel client.MatchingLabelsSelector,
	live *liveState) error {
	for _, ns := range w.watchNamespaces() {
		if err := w.listKindIn(ctx, gvk, []client.ListOption{sel, client.InNamespace(ns)}, live); err != nil {
			return err
		}
	}
	return nil
}

func (w *DriftWatcher) listKindIn(ctx context.Context, gvk schema.GroupVersionKind, sel []client.ListOption, live *liveState) error {
	if w.intervalOnly || w.kindsSynced([]schema.GroupKind{gvk.GroupKind()}) {
		meta := &metav1.PartialObjectMetadataList{}
		meta.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := w.client.Kube.List(ctx, meta, sel...); err != nil {
			return fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		if w.fromCache(gvk, meta.Items, live) <= maxStaleReads {
			return nil
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := w.client.Kube.List(ctx, list, sel...); err != nil {
		return fmt.Errorf("list %s: %w", gvk.Kind, err)
	}
	for i := range list.Items {
		ref := RefOf(&list.Items[i]).key()
		live.versions[ref] = list.Items[i].GetResourceVersion()
		live.objects[ref] = &list.Items[i]
	}
	return nil
}

// fromCache records the listed objects' resourceVersions in live, with
// the whole objects the watch's cache holds at those versions, and
// returns how many tracked objects that changed since they were last in
// sync it has no copy of.
func (w *DriftWatcher) fromCache(gvk schema.GroupVersionKind, items []metav1.PartialObjectMetadata, live *liveState) (stale int) {
	for i := range items {
		m := &items[i]
		ref := ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: m.Namespace, Name: m.Name}
		live.versions[ref] = m.ResourceVersion
		if w.inSyncAt(ref, m.ResourceVersion) {
			continue
		}
		if u := w.cached(ref, m.ResourceVersion); u != nil {
			live.objects[ref] = u
		} else if w.tracked(ref) {
			stale++
		}
	}
	return stale
}

// inSyncAt reports whether every profile that tracks ref with drift
// detection on found it in sync at resourceVersion rv.
func (w *DriftWatcher) inSyncAt(ref ObjectRef, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, dp := range w.profiles {
		if d := dp.objects[ref]; d != nil && !d.disabled && !d.inSyncAt(rv) {
			return false
		}
	}
	return true
}

// trackedDesired is one tracked object of a profile.
type trackedDesired struct {
	ref ObjectRef
	d   *desiredObject
}

// snapshot returns a profile's tracked objects with drift detection on,
// and its drift exclusions.
func (w *DriftWatcher) snapshot(profile string) ([]trackedDesired, []jsondiff.IgnoreRule) {
	w.mu.Lock()
	defer w.mu.Unlock()
	dp := w.profiles[profile]
	if dp == nil {
		return nil, nil
	}
	out := make([]trackedDesired, 0, len(dp.objects))
	for ref, d := range dp.objects {
		if !d.disabled {
			out = append(out, trackedDesired{ref: ref, d: d})
		}
	}
	return out, dp.rules
}
