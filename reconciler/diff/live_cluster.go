package diff

import (
	"context"
	"errors"
	"fmt"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// cluster compares one cluster: every profile that selects it at head,
// and every profile it holds (by inventory) that no longer does.
func (l *liveRun) cluster(ctx context.Context, c *spec.Cluster) LiveCluster {
	name := c.Metadata.Name
	lc := LiveCluster{Cluster: name, Profiles: []LiveProfile{}}
	if c.Spec.Paused {
		lc.Note = "paused: not compared"
		return lc
	}
	cl, held, err := l.connect(ctx, c)
	if err != nil {
		lc.Error = err.Error()
		return lc
	}
	lc.Reachable = true
	names := map[string]bool{}
	for p := range l.head.matched[name] {
		names[p] = true
	}
	for p := range held {
		names[p] = true
	}
	for _, p := range sortedKeys(names) {
		lp, err := l.profile(ctx, cl, c, p, held[p])
		var ue *apply.UnreachableError
		if errors.As(err, &ue) {
			return LiveCluster{Cluster: name, Error: err.Error(), Profiles: []LiveProfile{}}
		}
		lc.Profiles = append(lc.Profiles, lp)
	}
	return lc
}

// connect reaches the cluster and reads which profiles it holds.
func (l *liveRun) connect(ctx context.Context, c *spec.Cluster) (*apply.Cluster, map[string]*apply.Inventory, error) {
	cl, err := l.reach(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	invs, err := cl.Inventories(ctx)
	if err != nil {
		return nil, nil, err
	}
	held := map[string]*apply.Inventory{}
	for _, inv := range invs {
		held[inv.Profile] = inv
	}
	return cl, held, nil
}

// reach returns the Manager's handle of the cluster: by its cloud
// provider's tokens, or by the kubeconfig opts.Kubeconfig finds.
func (l *liveRun) reach(ctx context.Context, c *spec.Cluster) (*apply.Cluster, error) {
	cl, err := l.handle(ctx, c)
	if err == nil {
		cl.SetNamespaces(c.Spec.Namespaces) // its inventories are read where they are
	}
	return cl, err
}

func (l *liveRun) handle(ctx context.Context, c *spec.Cluster) (*apply.Cluster, error) {
	if c.Spec.Kubeconfig.Cloud != nil && l.opts.Credentials != nil {
		a, err := l.opts.Credentials.Resolve(ctx, nil, nil, nil, c)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		return l.opts.Manager.ClusterFor(c.Metadata.Name, a.Config, a.Key)
	}
	kc, err := l.opts.Kubeconfig(ctx, c)
	if err != nil && c.Pulled() {
		return nil, fmt.Errorf("cluster %s is pulled (spec.mode: pull): no kubeconfig for it is kept anywhere; give a read-only one in --kubeconfig-dir to compare it live, or read its agent's status: %w", c.Metadata.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return l.opts.Manager.Cluster(c.Metadata.Name, kc)
}

// profile dry-runs a profile that selects the cluster, or lists what
// withdrawing one that no longer does removes.
func (l *liveRun) profile(ctx context.Context, cl *apply.Cluster, c *spec.Cluster, name string, inv *apply.Inventory) (LiveProfile, error) {
	cluster := c.Metadata.Name
	if !l.head.matched[cluster][name] {
		return l.withdrawn(cluster, inv), nil
	}
	prof := l.head.Fleet.Profile(name)
	lp := LiveProfile{Profile: name, Objects: []LiveObject{}}
	res, err := l.opts.Renderer.Render(ctx, render.Request{FS: l.head.Fleet.FS, Revision: l.head.Revision,
		Profile: prof, Cluster: l.head.facts[cluster], TreeHash: l.head.TreeHash})
	if err != nil {
		lp.Error = err.Error()
		return lp, nil
	}
	out := cl.Apply(ctx, dryRunRequest(prof, res, l.head.Revision))
	if out.Err != nil {
		var ue *apply.UnreachableError
		if errors.As(out.Err, &ue) {
			return lp, out.Err
		}
		lp.Error = out.Error
	}
	_, byID := objectsOf(res)
	for _, ch := range out.Changes {
		l.record(&lp, cluster, name, ch, byID)
	}
	return lp, nil
}

// dryRunRequest is the request the daemon would make, in DryRun mode. Its
// objects are the render cache's, shared and read-only; apply copies them
// before changing anything.
func dryRunRequest(prof *spec.Profile, res *render.Result, revision string) apply.Request {
	req := apply.Request{Profile: prof.Metadata.Name, Tier: new(prof.Tier()), Revision: revision, RenderHash: res.Hash,
		SyncMode: spec.SyncModeDryRun, StopMatchingBehavior: prof.Spec.StopMatchingBehavior,
		DriftExclusions: prof.Spec.DriftExclusions}
	for _, st := range res.Steps {
		step := apply.Step{
			Addon:     st.Addon,
			Phase:     apply.Phase(st.Phase),
			Weight:    st.Weight,
			Namespace: st.Namespace,
		}
		for _, o := range st.Objects {
			step.Objects = append(step.Objects, o.Unstructured)
		}
		req.Steps = append(req.Steps, step)
	}
	return req
}

// record adds one dry-run change, hiding the diff of objects that may
// hold values decrypted from SOPS files (Secrets are redacted by apply).
func (l *liveRun) record(lp *LiveProfile, cluster, profile string, ch apply.ObjectChange, byID map[string]rendered) {
	o := ObjectChange{APIVersion: apiVersion(ch.Object), Kind: ch.Object.Kind, Namespace: ch.Object.Namespace,
		Name: ch.Object.Name, Addon: ch.Addon, Diff: ch.Diff, Message: ch.Message}
	switch ch.Action {
	case apply.ActionUnchanged:
		lp.Counts.Unchanged++
		return
	case apply.ActionCreated:
		o.Action, lp.Counts.Created = ActionCreated, lp.Counts.Created+1
	case apply.ActionConfigured:
		o.Action, lp.Counts.Updated = ActionUpdated, lp.Counts.Updated+1
	case apply.ActionDeleted:
		o.Action, lp.Counts.Deleted = ActionDeleted, lp.Counts.Deleted+1
	default:
		o.Action = string(ch.Action)
	}
	id := changeIdentity(o)
	if ro, ok := byID[id]; ok && o.Diff != "" && l.head.sensitive(profile, ro) {
		o.Diff, o.Message = "", "diff hidden: the object may hold values decrypted from a SOPS file"
	}
	lo := LiveObject{ObjectChange: o, Drift: !l.planned[cluster+"|"+profile+"|"+id]}
	if lo.Drift {
		lp.Counts.Drifted++
	}
	lp.Objects = append(lp.Objects, lo)
}

// withdrawn lists the objects of a profile the cluster holds that no
// longer selects it: deleted, or released with LeavePolicies.
func (l *liveRun) withdrawn(cluster string, inv *apply.Inventory) LiveProfile {
	lp := LiveProfile{Profile: inv.Profile, Withdrawn: true, Objects: []LiveObject{}}
	behavior := inv.StopMatchingBehavior
	if prof := l.head.Fleet.Profile(inv.Profile); prof != nil {
		behavior = prof.Spec.StopMatchingBehavior
	}
	action := ActionDeleted
	if behavior == spec.StopMatchingLeavePolicies {
		action = ActionReleased
	}
	for _, e := range inv.Objects {
		o := ObjectChange{Action: action, APIVersion: apiVersion(e.ObjectRef), Kind: e.Kind,
			Namespace: e.Namespace, Name: e.Name, Addon: e.Addon}
		drift := !l.planned[cluster+"|"+inv.Profile+"|"+changeIdentity(o)]
		if action == ActionDeleted {
			lp.Counts.Deleted++
		}
		if drift {
			lp.Counts.Drifted++
		}
		lp.Objects = append(lp.Objects, LiveObject{ObjectChange: o, Drift: drift})
	}
	return lp
}

func apiVersion(r apply.ObjectRef) string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}
