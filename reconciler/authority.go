package reconciler

import (
	"context"
	"log/slog"
	"time"

	"github.com/regatta-dev/regatta/reconciler/agent"
	"github.com/regatta-dev/regatta/spec"
)

// Who may write a cluster
//
// One question decides whether this process may reconcile a cluster and
// write its record now, and the authority is its one home. It is the
// conjunction of rights, each of one mode of running:
//   - the mode right: an agent reconciles its own pulled cluster only,
//     every other daemon every cluster but the pulled ones, by the
//     revision in force (pull mode);
//   - the shard right: a replica of a sharded fleet reconciles the clusters
//     its Lease gives it (Ownership);
//   - the turn right: across a switch of spec.mode, the side that holds
//     the cluster's turn of the writer handshake (daemon_handover.go moves
//     the turns on).
//
// The loop asks once per cluster's pass (grant). A grant is asked again
// between the pass's apply steps and, sharded, every fencePoll, and a pass
// in flight holds back a release of the turn. A fourth mode is a fourth
// right; notifications and the UI learn who speaks for a cluster from
// Daemon.Speaker.

// fencePoll is how often a cluster being reconciled re-checks its
// ownership, so that a replica that lost a cluster cancels its requests
// well within the margin the Lease leaves before another may start.
const fencePoll = 100 * time.Millisecond

// Ownership shards the fleet among replicas (reconciler/shard implements
// it with membership Leases). A daemon with one touches a cluster only
// while Owns says so: it is asked before a cluster's reconciliation,
// between its apply steps (with the supersede check) and every
// fencePoll while it runs, when a lost cluster's requests are cancelled.
type Ownership interface {
	// Owns reports whether this replica may work on the cluster now.
	Owns(cluster string) bool
	// OwnsFleet reports whether this replica writes the fleet-wide part
	// of status (fleet.yaml and the dashboard).
	OwnsFleet() bool
	// Identity names this replica in status records.
	Identity() string
}

// Speaker says who writes a cluster and its record now, as this process
// sees it.
type Speaker struct {
	// Reconciles: this process may reconcile the cluster now.
	Reconciles bool
	// Shows: this process writes a record of the cluster it does not
	// reconcile (a pulled cluster's as its agent committed it, or one
	// saying whose release it waits for).
	Shows bool
	// Name is this process in status records: a replica's identity,
	// "agent:<cluster>", or empty for a daemon alone.
	Name string
}

// right is one condition of the authority.
type right interface {
	// holds reports whether the right lets this process reconcile the
	// cluster now. The authority asks with the handshake's lock held.
	holds(cluster string) bool
}

// authority answers who may write a cluster (see above).
type authority struct {
	hand   *handover // its lock orders the questions; it counts passes in flight
	mode   modeRight
	shard  Ownership // nil unsharded
	rights []right
	// showsPeer reports whether a peer's record of the cluster was read.
	showsPeer func(cluster string) bool
	log       *slog.Logger
}

func newAuthority(hand *handover, mode modeRight, shard Ownership, turns turnRight, showsPeer func(string) bool, log *slog.Logger) *authority {
	a := &authority{hand: hand, mode: mode, shard: shard, showsPeer: showsPeer, log: log}
	a.rights = []right{mode, turns, shardRight{shard}}
	return a
}

// may reports whether this process may reconcile the cluster now.
func (a *authority) may(cluster string) bool {
	a.hand.mu.Lock()
	defer a.hand.mu.Unlock()
	return a.holdsAll(cluster)
}

func (a *authority) holdsAll(cluster string) bool {
	a.hand.init()
	for _, r := range a.rights {
		if !r.holds(cluster) {
			return false
		}
	}
	return true
}

// grant is the right to one pass of a cluster, taken by grant and given
// back by release.
type grant struct {
	a       *authority
	cluster string
}

// grant takes a pass of the cluster, when this process may reconcile it
// now; nil when it may not. A release of the cluster's turn waits for its
// passes in flight.
func (a *authority) grant(cluster string) *grant {
	a.hand.mu.Lock()
	defer a.hand.mu.Unlock()
	if !a.holdsAll(cluster) {
		return nil
	}
	a.hand.inFlight[cluster]++
	return &grant{a: a, cluster: cluster}
}

// release ends the pass.
func (g *grant) release() {
	g.a.hand.mu.Lock()
	defer g.a.hand.mu.Unlock()
	g.a.hand.inFlight[g.cluster]--
}

// held reports whether the process may still reconcile the cluster.
func (g *grant) held() bool { return g.a.may(g.cluster) }

// fence returns a context for the pass that ends when the process no
// longer may reconcile the cluster. Only a replica's shard moves while a
// pass runs (a turn is never released with a pass in flight), so only a
// sharded daemon polls.
func (g *grant) fence(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if g.a.shard == nil {
		return ctx, cancel
	}
	go func() {
		t := time.NewTicker(fencePoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !g.held() {
					g.a.log.Warn("lost the cluster to another replica; stopping", "cluster", g.cluster)
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}

// ownsShard reports whether this replica owns the cluster's shard: always
// without an Ownership.
func (a *authority) ownsShard(cluster string) bool { return shardRight{a.shard}.holds(cluster) }

// shows reports whether this process writes a record of a cluster it does
// not reconcile: an agent its own (the record of a refusal says why), the
// central daemon (with replicas, the cluster's owner, which records its
// handover turn) the record a pulled cluster's agent committed and the
// record of a pushed cluster whose agent has not released it yet.
func (a *authority) shows(cluster string) bool {
	if ag := a.mode.agent; ag != nil {
		return cluster == ag.Name
	}
	if a.hand.isWaiting(cluster) {
		return a.ownsShard(cluster)
	}
	return a.showsPeer(cluster) && a.ownsShard(cluster)
}

// writes reports whether this process writes the cluster's record: one it
// may reconcile and computed, or one it shows.
func (a *authority) writes(cluster string, computed bool) bool {
	return (computed && a.may(cluster)) || a.shows(cluster)
}

// name is this process in status records; empty for a daemon alone.
func (a *authority) name() string {
	if ag := a.mode.agent; ag != nil {
		return "agent:" + ag.Name
	}
	if a.shard == nil {
		return ""
	}
	return a.shard.Identity()
}

// speaker answers Daemon.Speaker.
func (a *authority) speaker(cluster string) Speaker {
	return Speaker{Reconciles: a.may(cluster), Shows: a.shows(cluster), Name: a.name()}
}

// modeRight is pull mode's right: an agent reconciles its own pulled
// cluster only, any other daemon every cluster but the pulled ones, by the
// revision in force.
type modeRight struct {
	agent   *AgentCluster
	current func() *revision
}

func (m modeRight) holds(cluster string) bool {
	var c *spec.Cluster
	if rev := m.current(); rev != nil {
		c = rev.repo.Cluster(cluster)
	}
	if m.agent != nil {
		return cluster == m.agent.Name && c != nil && c.Pulled()
	}
	return c == nil || !c.Pulled()
}

// shardRight is a sharded replica's right: its Lease's clusters.
type shardRight struct{ shard Ownership }

func (s shardRight) holds(cluster string) bool { return s.shard == nil || s.shard.Owns(cluster) }

// turnRight is the writer handshake's right: whether this process holds
// the cluster's turn (reconciler/agent/handover.go). The central daemon at
// turn 0 also needs the agents' turns read at a revision that pushed the
// cluster already (pushedAt); an agent on its own claim needs the claim
// checked. Without the handshake (tests of the library) it always holds.
type turnRight struct {
	hand *handover
	side agent.Side
	// on reports whether this daemon takes part in the handshake.
	on func() bool
}

func (t turnRight) holds(cluster string) bool {
	if !t.on() {
		return true
	}
	h := t.hand
	own, other := h.own[cluster], h.other[cluster]
	if !agent.Decide(t.side, true, own, other).Act {
		return false
	}
	if t.side == agent.Agent {
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
