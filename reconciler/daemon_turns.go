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
