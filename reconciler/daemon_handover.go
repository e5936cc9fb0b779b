package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/reconciler/agent"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/spec"
)

// handoverClusters are the clusters whose turns this daemon follows.
func (d *Daemon) handoverClusters(rev *revision) []string {
	if d.opts.Agent != nil {
		return []string{d.opts.Agent.Name}
	}
	names := make([]string, 0, len(rev.repo.Clusters))
	for _, c := range rev.repo.Clusters {
		names = append(names, c.Metadata.Name)
	}
	return names
}

// handoverTick reads the other side's turns and moves the handshake on:
// it records the releases whose passes ended (a status commit carries
// them), an agent claims a cluster new in the repository as pulled, the
// records of the clusters waiting for their turn say so, and queue gets
// each cluster whose turn this daemon just got.
func (d *Daemon) handoverTick(ctx context.Context, queue func(string)) {
	rev := d.r.current()
	if !d.handshakes() || rev == nil {
		return
	}
	names := d.handoverClusters(rev)
	turns, err := d.opts.Peers.Turns(ctx, d.opts.Agent == nil, names)
	committed := d.committedTurns(ctx)
	d.hand.mu.Lock()
	d.hand.init()
	for n, t := range committed {
		d.hand.own[n] = max(d.hand.own[n], t)
	}
	if err != nil {
		d.r.log.Warn("cannot read the other side's handover turns; acting on the last read", "error", err)
	} else {
		for _, n := range names {
			d.hand.other[n], d.hand.otherAt[n] = turns[n].Turn, turns[n].Revision
		}
		d.hand.readAt = rev
	}
	d.hand.mu.Unlock()
	for _, n := range names {
		d.handoverStep(ctx, rev, n, queue)
	}
}

// committedTurns are, for a replica of a sharded fleet, the central
// daemon's turns as the status branch holds them: a replica that gained a
// cluster goes on from the turn its owner before committed.
func (d *Daemon) committedTurns(ctx context.Context) map[string]int64 {
	if d.opts.Ownership == nil || d.opts.Agent != nil {
		return nil
	}
	snap, err := d.branchStatus(ctx)
	if err != nil {
		d.r.log.Warn("cannot read the status branch for the handover turns", "error", err)
		return nil
	}
	out := map[string]int64{}
	for _, c := range snap.Clusters {
		if c.Handover != nil {
			out[c.Cluster] = c.Handover.Turn
		}
	}
	return out
}

// handoverStep moves one cluster's handshake on. Of a sharded fleet, only
// the replica that owns the cluster does: the one whose passes of it may
// be in flight.
func (d *Daemon) handoverStep(ctx context.Context, rev *revision, name string, queue func(string)) {
	if d.opts.Agent == nil && !d.auth.ownsShard(name) {
		d.hand.mu.Lock()
		d.hand.waiting[name] = false
		d.hand.mu.Unlock()
		return
	}
	d.hand.mu.Lock()
	own, other, otherAt := d.hand.own[name], d.hand.other[name], d.hand.otherAt[name]
	st := agent.Decide(d.side(), d.auth.mode.holds(name), own, other)
	release := st.Release && d.hand.inFlight[name] == 0
	wasWaiting, verified := d.hand.waiting[name], d.hand.verified
	d.hand.waiting[name] = st.Wait
	d.hand.mu.Unlock()
	if release && other > own && d.handedAhead(ctx, rev, name, otherAt) {
		return
	}
	switch {
	case release:
		d.r.opts.Apply.Forget(name) // drift watches: stopped before the release is recorded
		d.record(name, st.Turn, rev.sha)
		d.r.log.Info("handed the cluster over", "cluster", name, "turn", st.Turn, "revision", status.ShortRevision(rev.sha))
	case st.Wait && d.opts.Agent != nil && agent.Fresh(own, other):
		d.claim(ctx, rev, name, queue)
	case st.Wait:
		d.showWaiting(rev, name, own, other)
	case st.Act && d.opts.Agent != nil && own == 1 && other == 0 && !verified:
		d.verifyClaim(ctx, name, queue)
	case st.Act && wasWaiting:
		d.r.log.Info("the other side handed the cluster over", "cluster", name, "turn", st.Turn)
		d.record(name, st.Turn, rev.sha)
		queue(name)
	}
}

// handedAhead reports whether the other side handed the cluster over at a
// revision after the one in force here, which this daemon has yet to
// load. The turn it holds then is one the other side gave it for that
// revision: handing it straight back on the older one would leave the
// cluster to a side that no longer wants it (an agent whose cluster went
// back to push stops after its release). It keeps the turn until it
// loads that revision or a later one, or finds it rewritten away.
func (d *Daemon) handedAhead(ctx context.Context, rev *revision, name, at string) bool {
	if at == "" || at == rev.sha || d.opts.Source == nil {
		return false
	}
	ahead, err := d.opts.Source.Descends(ctx, at, rev.sha)
	switch {
	case errors.Is(err, repo.ErrRevisionNotFound):
		return false
	case err != nil:
		d.r.log.Warn("cannot tell whether the other side handed the cluster over at a later revision; keeping the turn for now", "cluster", name, "revision", status.ShortRevision(at), "error", err)
		return true
	case ahead:
		d.r.log.Info("the other side handed the cluster over at a later revision; keeping the turn until it is loaded", "cluster", name, "revision", status.ShortRevision(at), "inForce", status.ShortRevision(rev.sha))
	}
	return ahead
}

// record sets this daemon's turn of a cluster for the next status commit.
func (d *Daemon) record(name string, turn int64, rev string) {
	d.hand.mu.Lock()
	d.hand.own[name], d.hand.at[name] = turn, rev
	d.hand.mu.Unlock()
	if _, ok := d.store.cluster(name); !ok {
		d.store.setCluster(status.ClusterStatus{Cluster: name, SourceRevision: rev, Mode: modeOf(d)})
	}
	d.store.touch()
}

func modeOf(d *Daemon) string {
	if d.opts.Agent != nil {
		return spec.ModePull
	}
	return ""
}

// showWaiting makes the cluster's record say whose release it waits for.
func (d *Daemon) showWaiting(rev *revision, name string, own, other int64) {
	var msg string
	if d.opts.Agent != nil {
		msg = fmt.Sprintf("waiting for the central daemon to hand over: cluster %s is spec.mode: pull at %s, and the central daemon has not yet recorded on its status branch that it stopped writing to it (turn %d; the agent needs an odd turn above %d); it does once its work in flight on the cluster ends",
			name, status.ShortRevision(rev.sha), other, own)
	} else {
		msg = fmt.Sprintf("waits for the agent's release: cluster %s is spec.mode: push at %s, and its agent has not yet recorded on %s that it stopped (turn %d; the central daemon needs an even turn above %d); an agent releases once its work in flight ends; if the agent is gone for good, release it by hand: regatta release-agent --cluster %s",
			name, status.ShortRevision(rev.sha), agent.StatusRef(name), other, own, name)
	}
	rec, _ := d.store.cluster(name)
	rec.Cluster, rec.SourceRevision, rec.Mode, rec.Error, rec.Reachable = name, rev.sha, modeOf(d), msg, false
	d.store.setCluster(rec)
}

// claim is an agent's start on a cluster nobody handed over: if the
// cluster was never pushed in the history of the revision in force, the
// agent records turn 1 and commits it before anything else, then checks
// the history again (verifyClaim).
func (d *Daemon) claim(ctx context.Context, rev *revision, name string, queue func(string)) {
	pushed, err := d.everPushed(ctx, rev.sha, name)
	switch {
	case err != nil:
		d.r.log.Warn("cannot read the history of the cluster; waiting for the central daemon to hand over", "cluster", name, "error", err)
		d.showWaiting(rev, name, 0, 0)
		return
	case pushed:
		d.showWaiting(rev, name, 0, 0)
		return
	}
	d.record(name, 1, rev.sha)
	d.verifyClaim(ctx, name, queue)
}

// verifyClaim commits an agent's claim, then reads the followed branch
// again: a pushed cluster in its history since (the central daemon may
// have acted on it before it could read the claim) voids the claim, which
// the agent then hands to the central daemon (turn 2).
func (d *Daemon) verifyClaim(ctx context.Context, name string, queue func(string)) {
	if err := d.commitStatus(); err != nil {
		d.r.log.Warn("cannot commit the agent's claim of its cluster; retrying", "error", err)
		return
	}
	head, _, err := d.opts.Source.FetchBranch(ctx, d.opts.Source.Branch())
	var pushed bool
	if err == nil {
		pushed, err = d.everPushed(ctx, head, name)
	}
	switch {
	case err != nil:
		d.r.log.Warn("cannot check the agent's claim of its cluster; retrying", "error", err)
	case pushed:
		d.r.log.Warn("the cluster was pushed since: the claim is void; handing it to the central daemon", "cluster", name)
		d.record(name, 2, head)
	default:
		d.hand.mu.Lock()
		d.hand.verified = true
		d.hand.mu.Unlock()
		d.r.log.Info("claimed the cluster, new in the repository as pulled", "cluster", name, "turn", 1)
		queue(name)
	}
}

// everPushed reports whether some revision reachable from rev has the
// cluster's cluster.yaml without spec.mode: pull.
func (d *Daemon) everPushed(ctx context.Context, rev, name string) (bool, error) {
	file := spec.ClustersDir + "/" + name + "/" + spec.ClusterFile
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return d.opts.Source.AnyVersion(ctx, rev, file, func(b []byte) bool {
		var c struct {
			Spec struct {
				Mode string `yaml:"mode"`
			} `yaml:"spec"`
		}
		return yaml.Unmarshal(b, &c) != nil || c.Spec.Mode != spec.ModePull
	})
}
