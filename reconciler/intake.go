package reconciler

import (
	"context"
	"fmt"
	"sort"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// load reads and accepts a revision, records the fleet status and queues
// the clusters of the revision in force: all of them when it changed or
// when every asks (RunOnce). A daemon that starts on an invalid head takes
// the revision the status branch says was in force, so it keeps enforcing
// what it enforced before.
func (d *Daemon) load(ctx context.Context, sha string, s *session, every bool) error {
	tree, err := d.opts.Source.Tree(ctx, sha)
	if err != nil {
		return fmt.Errorf("read revision %s: %w", sha, err)
	}
	before := d.r.current()
	fleet := status.Fleet{SourceRevision: sha}
	good := d.r.accept(sha, tree, &fleet)
	if good == nil {
		good = d.acceptInForce(ctx)
	}
	if good != nil {
		fleet.AppliedRevision, fleet.DependsOn = good.sha, dependenciesOf(good.repo)
		if good.sha == sha {
			fleet.RefusedTenants = refusedTenants(good.repo)
		}
		d.r.opts.Metrics.SetRevision(good.sha)
	}
	d.store.setFleet(fleet)
	if good == nil {
		d.r.opts.Metrics.SetReady(true) // nothing to enforce yet; status says why
		return nil
	}
	if good != before {
		d.forgetRemoved(good.repo)
		d.retainEventWatches(good.repo)
		d.pruneRollouts(good.repo)
		s.revisionChanged()
	}
	if err := d.agentCheck(good); err != nil {
		return err
	}
	if good != before {
		d.dropLost() // clusters that became pulled: no more drift watches here
	}
	d.handoverTick(ctx, func(name string) { s.q.addUrgent(name) })
	if good != before || every {
		d.refreshPeers(ctx)
		s.queueAll(false)
	}
	return nil
}

// acceptInForce loads the revision the status branch recorded as in force
// when the daemon started; nil when there is none or it does not load.
func (d *Daemon) acceptInForce(ctx context.Context) *revision {
	d.mu.Lock()
	sha := d.inForce
	d.inForce = "" // one try
	d.mu.Unlock()
	if sha == "" {
		return nil
	}
	if err := d.opts.Source.EnsureCommit(ctx, sha); err != nil {
		d.r.log.Error("cannot read the revision in force before the restart", "revision", sha, "error", err)
		return nil
	}
	tree, err := d.opts.Source.Tree(ctx, sha)
	if err != nil {
		d.r.log.Error("cannot read the revision in force before the restart", "revision", sha, "error", err)
		return nil
	}
	var ignored status.Fleet
	good := d.r.accept(sha, tree, &ignored)
	if good != nil {
		d.r.log.Info("the newest revision is invalid; enforcing the revision in force before the restart", "revision", sha)
	}
	return good
}

// forgetRemoved drops clients, state and status records of clusters no
// longer in the repository. Their objects stay: without its kubeconfig a
// removed cluster cannot be reached.
func (d *Daemon) forgetRemoved(repo *spec.Repository) {
	names := map[string]bool{}
	for _, c := range repo.Clusters {
		names[c.Metadata.Name] = true
	}
	d.store.keepOnly(names)
	d.r.forgetIdentities(names)
	d.mu.Lock()
	for name := range d.converged {
		if !names[name] {
			delete(d.converged, name)
		}
	}
	d.mu.Unlock()
	r := d.r
	r.mu.Lock()
	var gone []string
	for name := range r.known {
		if !names[name] {
			gone = append(gone, name)
			delete(r.known, name)
		}
	}
	r.mu.Unlock()
	sort.Strings(gone)
	for _, name := range gone {
		r.log.Info("cluster left the repository; its objects are left in place", "cluster", name)
		r.opts.Apply.Forget(name)
		r.opts.Credentials.Forget(name)
	}
}

// restore reads, once, what an earlier daemon committed to the status
// branch: its records (kept until recomputed), each cluster's last
// Kubernetes version and classifier labels (used, marked stale, while a
// cluster cannot be read), and the revision in force.
func (d *Daemon) restore(ctx context.Context) {
	d.mu.Lock()
	done := d.restored || d.opts.StatusBranch == ""
	d.restored = true
	d.mu.Unlock()
	if done {
		return
	}
	rev, found, err := d.opts.Source.FetchBranch(ctx, d.opts.StatusBranch)
	if err != nil || !found {
		if err != nil {
			d.r.log.Warn("cannot read the status branch; starting without what an earlier daemon knew", "error", err)
		}
		return
	}
	tree, err := d.opts.Source.Tree(ctx, rev)
	var snap status.Snapshot
	if err == nil {
		snap, err = status.Read(tree)
	}
	if err != nil {
		d.r.log.Warn("cannot read the status branch; starting without what an earlier daemon knew", "error", err)
		return
	}
	d.store.seed(snap)
	d.seedTurns(snap.Clusters)
	d.r.seedKnown(snap.Clusters)
	d.r.rollouts.resumeFrom(snap.Fleet.Rollouts, snap.Clusters)
	d.mu.Lock()
	d.inForce = snap.Fleet.AppliedRevision
	d.mu.Unlock()
	d.r.log.Info("restored status", "clusters", len(snap.Clusters), "inForce", status.ShortRevision(snap.Fleet.AppliedRevision))
}
