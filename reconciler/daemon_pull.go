package reconciler

import (
	"context"
	"fmt"
	"reflect"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// agentCheck refuses a revision in force that does not make this agent's
// cluster a pulled cluster: never two writers. The refusal is the
// cluster's record, so the agent's status ref says why.
func (d *Daemon) agentCheck(good *revision) error {
	a := d.opts.Agent
	if a == nil {
		return nil
	}
	c := good.repo.Cluster(a.Name)
	var reason string
	switch {
	case c == nil:
		reason = fmt.Sprintf("the repository has no cluster %s (%s/%s/%s)", a.Name, spec.ClustersDir, a.Name, spec.ClusterFile)
	case !c.Pulled():
		reason = fmt.Sprintf("cluster %s is not spec.mode: pull (%s): the central daemon reconciles it, and an agent never acts beside it; set spec.mode: pull first", a.Name, c.Source.File)
	default:
		return nil
	}
	err := &RefusedError{Cluster: a.Name, Revision: good.sha, Reason: reason}
	d.store.setCluster(status.ClusterStatus{Cluster: a.Name, SourceRevision: good.sha, Mode: spec.ModePull, Error: err.Error()})
	return err
}

// agentFiles is an agent's status commit: fleet.yaml (what it knows of
// the repository, for its restart) and its own cluster's record, nothing
// else, on its own ref.
func (d *Daemon) agentFiles(snap status.Snapshot) (map[string][]byte, error) {
	own := status.Snapshot{Fleet: snap.Fleet}
	for _, c := range snap.Clusters {
		if c.Cluster == d.opts.Agent.Name {
			c.Mode = spec.ModePull
			own.Clusters = append(own.Clusters, c)
		}
	}
	files, err := status.Files(own)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{status.FleetFile: true, status.ClusterFile(d.opts.Agent.Name): true}
	for p := range files {
		if !keep[p] {
			delete(files, p)
		}
	}
	return files, nil
}

// refreshPeers reads the records of the clusters this daemon does not
// reconcile. The central daemon keeps the pulled clusters' records among
// its own, so its status branch and dashboard show them; an agent keeps
// them aside, for its rollouts only. A change wakes the pairs waiting
// for a rollout.
func (d *Daemon) refreshPeers(ctx context.Context) {
	rev := d.r.current()
	if d.opts.Peers == nil || rev == nil || !d.needsPeers(rev.repo) {
		return
	}
	var pulled, pushed []string
	for _, c := range rev.repo.Clusters {
		switch name := c.Metadata.Name; {
		case d.opts.Agent != nil && name == d.opts.Agent.Name:
		case c.Pulled():
			pulled = append(pulled, name)
		case d.opts.Agent != nil:
			pushed = append(pushed, name)
		}
	}
	recs, err := d.opts.Peers.Records(ctx, pulled, pushed)
	if err != nil {
		d.r.log.Warn("cannot read the status of the clusters other processes reconcile", "error", err)
		return
	}
	byName := make(peerRecords, len(recs))
	for _, rec := range recs {
		byName[rec.Cluster] = rec
		if d.opts.Agent == nil && rev.repo.Cluster(rec.Cluster).Pulled() {
			d.store.setPeer(rec)
		}
	}
	d.mu.Lock()
	changed := !reflect.DeepEqual(d.peers, byName)
	d.peers = byName
	d.mu.Unlock()
	if changed {
		d.r.rollouts.wakePending()
	}
}

// needsPeers reports whether this daemon uses the other processes'
// records: an agent for its rollouts only; the central daemon (every
// replica of a sharded fleet: each writes the records of the pulled
// clusters it owns) always.
func (d *Daemon) needsPeers(repo *spec.Repository) bool {
	if d.opts.Agent != nil {
		return anyRollout(repo)
	}
	return true
}

func anyRollout(repo *spec.Repository) bool {
	for _, p := range repo.Profiles {
		if p.Spec.Rollout != nil {
			return true
		}
	}
	return false
}

// peer returns the record of a cluster another process reconciles.
func (d *Daemon) peer(cluster string) (status.ClusterStatus, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	rec, ok := d.peers[cluster]
	return rec, ok
}
