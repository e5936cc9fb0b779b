package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// trackDrift hands a profile's applied objects to the cluster's drift
// watcher, starting it on first use. A watcher that cannot track the profile
// makes the next pass re-apply instead of skipping.
func (c *Cluster) trackDrift(ctx context.Context, profile string, objs []*unstructured.Unstructured, rules []jsondiff.IgnoreRule) {
	if c.m.ctx.Err() != nil {
		return // the Manager is closed
	}
	c.mu.Lock()
	if c.drift == nil {
		c.drift = newDriftWatcher(c.m.ctx, c.name, c.client, c.m.opts)
	}
	w := c.drift
	c.mu.Unlock()
	if err := w.Track(ctx, profile, objs, rules); err != nil {
		c.log().Error("drift tracking failed", "profile", profile, "error", err)
		c.setState(profile, nil)
	}
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

func (c *Cluster) driftCorrections(profile string) int {
	if w := c.watcher(); w != nil {
		return w.Corrections(profile)
	}
	return 0
}

// DriftCheck compares every object tracked for drift with the cluster by
// server-side dry-run, and re-applies those that drifted: the safety net run
// every --drift-interval, for changes a watch may have missed. It returns the
// corrections made (also reported through Options.OnDrift).
func (c *Cluster) DriftCheck(ctx context.Context) ([]DriftEvent, error) {
	w := c.watcher()
	if w == nil {
		return nil, nil
	}
	var events []DriftEvent
	var errs []error
	for _, profile := range w.trackedProfiles() {
		unlock := c.lockProfile(profile)
		ev, err := w.check(ctx, profile)
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

// check dry-runs every tracked object of a profile (ssa ApplyAll applies only
// the drifted ones), leaving out objects another profile owns now.
func (w *DriftWatcher) check(ctx context.Context, profile string) ([]DriftEvent, error) {
	objs, rules := w.snapshot(profile)
	if len(objs) == 0 {
		return nil, nil
	}
	objs, err := w.dropForeign(ctx, profile, objs)
	if err != nil {
		return nil, err
	}
	cs, err := w.rm.ApplyAll(ctx, objs, driftApplyOptions(rules))
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

func (w *DriftWatcher) snapshot(profile string) ([]*unstructured.Unstructured, []jsondiff.IgnoreRule) {
	w.mu.Lock()
	defer w.mu.Unlock()
	dp := w.profiles[profile]
	if dp == nil {
		return nil, nil
	}
	objs := make([]*unstructured.Unstructured, 0, len(dp.objects))
	for _, o := range dp.objects {
		if !driftDisabled(o) {
			objs = append(objs, o.DeepCopy())
		}
	}
	return objs, dp.rules
}

// dropForeign removes (and forgets) the objects another profile owns now.
func (w *DriftWatcher) dropForeign(ctx context.Context, profile string, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	ds := make([]desired, len(objs))
	for i, o := range objs {
		ds[i] = desired{obj: o}
	}
	owners, err := labelledOwners(ctx, w.client.Kube, ds)
	if err != nil {
		return nil, err
	}
	kept := objs[:0]
	for _, o := range objs {
		key := driftKey{profile: profile, ref: RefOf(o).key()}
		if o, labelled := owners[key.ref]; labelled && o.profile != profile {
			w.forget(key)
			continue
		}
		kept = append(kept, o)
	}
	return kept, nil
}
