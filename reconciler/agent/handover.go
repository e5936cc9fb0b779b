package agent

// The handshake that keeps two processes from writing to one cluster
// across a switch of spec.mode. Each side records a turn number with its
// record of the cluster: the central daemon on its status branch, the
// agent on its ref. The turn in force is the larger of the two; the
// central daemon holds the even turns (0, the start, included), the agent
// the odd ones. A side that holds the turn but no longer wants it (the
// revision in force gives the cluster to the other side) waits until none
// of its work on the cluster is in flight and records the next turn: that
// record is the release. A side that wants the turn but does not hold it
// waits for the other's release, reading it from Git.
//
// Why no two writers: let c and a be the turns the central daemon and the
// agent recorded now, c' <= c and a' <= a the ones each last read of the
// other (recorded turns only grow, and a side reads only what the other
// committed). A side writes only while its view max(own, read) has its
// parity, and it records a turn in two ways only: taking the other's
// release (the turn it read, so never above the other's own) or, with
// nothing of it in flight, releasing (its view plus one). Suppose both
// write, and say c >= a: the central daemon sees c, even; the agent sees
// an odd turn below c, so c > a; but an even c was recorded taking a
// release, so c <= a (or c = 0 = a, where the agent sees 0 too).
// Symmetrically for a > c, except the agent's claim of turn 1 on a cluster
// new as pulled, which it checks against the history (Fresh).
// TestHandoverNeverTwoWriters walks random interleavings.

// Side is who decides: the central daemon or the cluster's agent.
type Side int

const (
	// Central is the central daemon (push); it holds the even turns.
	Central Side = iota
	// Agent is the cluster's agent (pull); it holds the odd turns.
	Agent
)

func (s Side) holds(turn int64) bool {
	return (turn%2 == 1) == (s == Agent)
}

// Step is what one side does about its cluster now.
type Step struct {
	// Act: the side holds the turn and wants it: it may write to the
	// cluster. Turn is the turn it holds.
	Act bool
	// Release: the side holds the turn and does not want it: once none of
	// its work on the cluster is in flight, it records Turn (the next
	// turn, the other side's) and commits it.
	Release bool
	// Wait: the side wants the turn and the other side holds it.
	Wait bool
	// Turn is the turn the side records.
	Turn int64
}

// Decide returns what side does, given whether the revision in force gives
// it the cluster (wants), the turn it recorded (own) and the turn it last
// read of the other side (other).
func Decide(side Side, wants bool, own, other int64) Step {
	turn := max(own, other)
	switch {
	case side.holds(turn) && wants:
		return Step{Act: true, Turn: turn}
	case side.holds(turn):
		return Step{Release: true, Turn: turn + 1}
	case wants:
		return Step{Wait: true, Turn: own}
	}
	return Step{Turn: own}
}

// Fresh reports whether an agent may claim its cluster without the
// central daemon's release: no side has recorded any turn yet. The agent
// claims only if, besides, the cluster was never a pushed cluster in the
// followed branch's history, and it commits the claim (turn 1) before it
// acts and checks the history again after.
func Fresh(own, other int64) bool { return own == 0 && other == 0 }
