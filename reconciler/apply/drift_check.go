package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// trackDrift hands a profile's applied objects to the cluster's drift
// watcher, starting it on first use. A watcher that cannot track the profile
// makes the next pass re-apply instead of skipping.
// Corrections are written as user (a tenant's ServiceAccount) when set.
func (c *Cluster) trackDrift(profile, user string, objs []*unstructured.Unstructured, rules []jsondiff.IgnoreRule) {
	if c.m.ctx.Err() != nil {
		return // the Manager is closed
	}
	if err := c.driftWatcher().Track(profile, user, objs, rules); err != nil {
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

func (c *Cluster) driftWatcher() *DriftWatcher {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drift == nil {
		c.drift = newDriftWatcher(c.m.ctx, c.name, c.client, c.m.opts)
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
// watch may have missed: it lists each tracked kind once, compares every
// tracked object with its live state, and hands only those missing or
// different to a server-side dry-run, which re-applies the ones that really
// drifted. A converged cluster costs one LIST per kind and no writes. It
// returns the corrections made (also reported through Options.OnDrift).
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
// forgotten.
func (w *DriftWatcher) check(ctx context.Context, profile string, live map[ObjectRef]*unstructured.Unstructured) ([]DriftEvent, error) {
	objs, rules, err := w.snapshot(profile)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", profile, err)
	}
	compiled := w.compiled(profile)
	var drifted []*unstructured.Unstructured
	cl := newClaims(w.client.Kube, w.fleet)
	for _, o := range objs {
		ref := RefOf(o).key()
		l, err := w.liveOrGet(ctx, live, ref, o.GroupVersionKind())
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", profile, err)
		}
		moved, err := w.movedTo(ctx, cl, profile, ref, l)
		switch {
		case err != nil:
			return nil, fmt.Errorf("profile %s: %w", profile, err)
		case moved:
			w.forget(driftKey{profile: profile, ref: ref})
		case l != nil && l.GetLabels()[LabelProfile] != profile, l != nil && !w.fleet.owns(l.GetLabels()):
			drifted = append(drifted, o) // relabelled: restore the labels
		case l != nil && (driftDisabled(l) || !differs(o, l, compiled)):
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
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := w.client.Kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, &ObjectError{Object: ref, Op: "get", Err: err}
	}
	return u, nil
}

// listTracked lists, once per kind, the objects of the watches' profiles
// (the same selector), for every kind a tracked profile has.
func (w *DriftWatcher) listTracked(ctx context.Context) (map[ObjectRef]*unstructured.Unstructured, error) {
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
	live := map[ObjectRef]*unstructured.Unstructured{}
	for gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := w.client.Kube.List(ctx, list, client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return nil, fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			live[RefOf(&list.Items[i]).key()] = &list.Items[i]
		}
	}
	return live, nil
}

func (w *DriftWatcher) snapshot(profile string) ([]*unstructured.Unstructured, []jsondiff.IgnoreRule, error) {
	w.mu.Lock()
	dp := w.profiles[profile]
	if dp == nil {
		w.mu.Unlock()
		return nil, nil, nil
	}
	desired, rules := dp.list(true), dp.rules
	w.mu.Unlock()
	objs, err := decode(desired)
	return objs, rules, err
}
