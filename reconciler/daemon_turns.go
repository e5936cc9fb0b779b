package reconciler

import (
	"github.com/regatta-dev/regatta/reconciler/agent"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// handshakes reports whether this daemon takes part in the handshake: it
// reads the other side's turns (Peers) and records its own (a status
// branch). Without either (tests of the library), modes alone decide.
func (d *Daemon) handshakes() bool { return d.opts.Peers != nil && d.opts.StatusBranch != "" }

func (d *Daemon) side() agent.Side {
	if d.opts.Agent != nil {
		return agent.Agent
	}
	return agent.Central
}

// mayWrite reports whether this daemon may write to the cluster now: the
// revision in force gives it the cluster and it holds the cluster's turn.
// The central daemon at turn 0 also needs the agents' turns read at a
// revision that pushed the cluster already (pushedAt); an agent on its own
// claim needs the claim checked. Callers hold d.hand.mu.
func (d *Daemon) mayWrite(cluster string) bool {
	d.hand.init()
	if !d.pullAllows(cluster) {
		return false
	}
	if !d.handshakes() {
		return true
	}
	h := &d.hand
	own, other := h.own[cluster], h.other[cluster]
	if !agent.Decide(d.side(), true, own, other).Act {
		return false
	}
	if d.opts.Agent != nil {
		return own != 1 || other != 0 || h.verified
	}
	return max(own, other) > 0 || pushedAt(h.readAt, cluster)
}

// pushedAt reports whether a revision has the cluster pushed. The central
// daemon acts at turn 0 only on a cluster pushed at the revision it last
// read the agents' turns at: an agent that claimed the cluster before
// that read is seen, and one that claims it after finds it pushed in the
// history of its claim and voids the claim.
func pushedAt(rev *revision, cluster string) bool {
	if rev == nil {
		return false
	}
	c := rev.repo.Cluster(cluster)
	return c != nil && !c.Pulled()
}

func (d *Daemon) writable(cluster string) bool {
	d.hand.mu.Lock()
	defer d.hand.mu.Unlock()
	return d.mayWrite(cluster)
}

// begin marks a pass of the cluster in flight, when this daemon may write
// to it; end marks it done. A release waits for the passes in flight.
func (d *Daemon) begin(cluster string) bool {
	d.hand.mu.Lock()
	defer d.hand.mu.Unlock()
	if !d.mayWrite(cluster) || !d.ownsShard(cluster) {
		return false
	}
	d.hand.inFlight[cluster]++
	return true
}

func (d *Daemon) end(cluster string) {
	d.hand.mu.Lock()
	defer d.hand.mu.Unlock()
	d.hand.inFlight[cluster]--
}

// seedTurns takes this daemon's turns from the records it committed before
// a restart.
func (d *Daemon) seedTurns(records []status.ClusterStatus) {
	d.hand.mu.Lock()
	defer d.hand.mu.Unlock()
	d.hand.init()
	for _, c := range records {
		if c.Handover != nil && (d.opts.Agent == nil || c.Cluster == d.opts.Agent.Name) {
			d.hand.own[c.Cluster], d.hand.at[c.Cluster] = c.Handover.Turn, c.Handover.Revision
		}
	}
}

// stampTurns puts this daemon's turns into the records it commits.
func (d *Daemon) stampTurns(snap *status.Snapshot) {
	d.hand.mu.Lock()
	defer d.hand.mu.Unlock()
	for i, c := range snap.Clusters {
		if t, ok := d.hand.own[c.Cluster]; ok && (t > 0 || c.Handover != nil) {
			snap.Clusters[i].Handover = &status.Handover{Turn: t, Revision: d.hand.at[c.Cluster]}
		} else {
			snap.Clusters[i].Handover = nil // a copy of an agent's record: its turn is the agent's
		}
	}
}
