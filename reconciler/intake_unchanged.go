package reconciler

import (
	"context"
	"path"

	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// settledOn remembers, per cluster, the revision its last reconciliation
// converged on (every pair Applied, DryRun, Withdrawn or Paused), for the
// unchanged check. A drift check, a failure or a pair still moving forgets
// it.
func (d *Daemon) settledOn(name string, rev *revision, st status.ClusterStatus, retry bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.converged == nil {
		d.converged = map[string]*revision{}
	}
	if retry || !st.Reachable || !converged([]status.ClusterStatus{st}) {
		delete(d.converged, name)
		return
	}
	d.converged[name] = rev
}

// unchanged returns the cluster's record moved to rev when rev changes
// nothing for it since the revision it last converged on: its folder,
// the classifiers and the files of the profiles it matches (by its last
// labels) are the same Git trees, and every such profile renders to the
// render hash its record holds. Such a cluster is not contacted at all: a
// commit costs only the clusters it affects. Classification then keeps
// its last labels until the next drift interval re-reads the cluster.
func (d *Daemon) unchanged(ctx context.Context, rev *revision, c *spec.Cluster) (status.ClusterStatus, bool) {
	name := c.Metadata.Name
	d.mu.Lock()
	prev := d.converged[name]
	d.mu.Unlock()
	rec, ok := d.store.cluster(name)
	if prev == nil || prev.sha == rev.sha || !ok || rec.Paused {
		return status.ClusterStatus{}, false
	}
	if !sameTree(prev.tree, rev.tree, path.Join(spec.ClustersDir, name)) || !sameTree(prev.tree, rev.tree, spec.ClassifiersDir) {
		return status.ClusterStatus{}, false
	}
	records := map[string]status.Profile{}
	for _, p := range rec.Profiles {
		if p.State != status.StateWithdrawn {
			records[p.Name] = p
		}
	}
	a := plan.Match(rev.repo.Profiles, plan.Cluster{Name: name, Labels: rec.Labels})
	matched := a.Profiles()
	if a.Err != nil || len(matched) != len(records) {
		return status.ClusterStatus{}, false
	}
	facts := render.FactsOf(c, rec.Labels, rec.KubernetesVersion)
	out := rec
	out.SourceRevision = rev.sha
	out.Profiles = make([]status.Profile, 0, len(matched))
	for _, prof := range matched {
		p, ok := records[prof.Metadata.Name]
		old := prev.repo.Profile(prof.Metadata.Name)
		if !ok || old == nil || old.Source.File != prof.Source.File || !sameTree(prev.tree, rev.tree, prof.Source.File) ||
			prof.IsEventProfile() { // its instances come from the cluster, not the tree

			return status.ClusterStatus{}, false
		}
		res, err := d.r.opts.Renderer.Render(ctx, render.Request{FS: rev.tree, Revision: rev.sha, Profile: prof,
			Cluster: facts, TreeHash: treeHasher(rev.tree)})
		if err != nil || res.Hash != p.RenderHash {
			return status.ClusterStatus{}, false
		}
		if prof.Spec.SyncMode != spec.SyncModeOneTime {
			p.Revision = rev.sha
			p.Artifacts = artifactsOf(res) // a new digest may render the same objects
		}
		p.DriftCorrections = int64(d.r.opts.Apply.DriftCorrections(name, prof.Metadata.Name))
		out.Profiles = append(out.Profiles, p)
	}
	return out, true
}
