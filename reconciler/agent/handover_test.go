package agent

import (
	"math/rand/v2"
	"testing"
)

func TestDecide(t *testing.T) {
	for _, tt := range []struct {
		side        Side
		wants       bool
		own, other  int64
		want        Step
		description string
	}{
		{Central, true, 0, 0, Step{Act: true, Turn: 0}, "a new pushed cluster: the central daemon acts"},
		{Agent, true, 0, 0, Step{Wait: true, Turn: 0}, "turn 0 is the central daemon's: an agent waits (unless Fresh)"},
		{Central, false, 0, 0, Step{Release: true, Turn: 1}, "push -> pull: the central daemon releases turn 1"},
		{Agent, true, 0, 1, Step{Act: true, Turn: 1}, "released: the agent acts"},
		{Central, true, 1, 0, Step{Wait: true, Turn: 1}, "pull -> push before the agent released: the central daemon waits"},
		{Agent, false, 1, 1, Step{Release: true, Turn: 2}, "pull -> push: the agent releases turn 2"},
		{Central, true, 1, 2, Step{Act: true, Turn: 2}, "the agent released: the central daemon acts"},
		{Agent, true, 2, 1, Step{Wait: true, Turn: 2}, "the agent's own release is newer than the central daemon's: it waits"},
		{Agent, false, 2, 1, Step{Turn: 2}, "released and not wanted: nothing"},
		{Central, false, 1, 0, Step{Turn: 1}, "released and not wanted: nothing"},
	} {
		if got := Decide(tt.side, tt.wants, tt.own, tt.other); got != tt.want {
			t.Errorf("%s: Decide(%v, %v, %d, %d) = %+v, want %+v", tt.description, tt.side, tt.wants, tt.own, tt.other, got, tt.want)
		}
	}
}

// handoverModel is the two sides of a cluster with what each knows: the
// revision it follows (each sees a switch of spec.mode at its own time),
// its own turn (in memory, and as committed to Git), the other's turn as
// it last read it, and whether work of it on the cluster is in flight.
type handoverModel struct {
	modes     []bool // spec.mode pull, by revision
	rev       [2]int // the revision each side has in force
	own       [2]int64
	committed [2]int64
	read      [2]int64
	inFlight  [2]bool
}

func (m *handoverModel) wants(s Side) bool { return m.modes[m.rev[s]] == (s == Agent) }

// step is one side's decision: it starts work (Act), or records a
// release once nothing of it is in flight.
func (m *handoverModel) step(s Side) {
	st := Decide(s, m.wants(s), m.own[s], m.read[s])
	switch {
	case st.Act:
		m.own[s], m.inFlight[s] = st.Turn, true
	case st.Release && !m.inFlight[s]:
		m.own[s] = st.Turn
	}
}

// TestHandoverNeverTwoWriters runs random interleavings of mode switches,
// each side's polls, decisions, commits, reads and the ends of its work,
// with every delay the real processes may have: at no point may both
// sides have work in flight.
func TestHandoverNeverTwoWriters(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	handovers := 0
	for run := range 2000 {
		m := &handoverModel{modes: []bool{false}}
		for range 200 {
			s := Side(r.IntN(2))
			switch r.IntN(7) {
			case 0:
				if len(m.modes) < 12 {
					m.modes = append(m.modes, !m.modes[len(m.modes)-1])
				}
			case 1:
				if m.rev[s] < len(m.modes)-1 {
					m.rev[s]++
				}
			case 2:
				m.step(s)
			case 3:
				m.committed[s] = m.own[s]
			case 4:
				m.read[s] = m.committed[1-s]
			case 5:
				if !m.wants(s) || r.IntN(4) == 0 {
					m.inFlight[s] = false // a pass ends (superseded, or done)
				}
			case 6:
				if !m.wants(s) || Decide(s, true, m.own[s], m.read[s]).Wait {
					m.inFlight[s] = false
				}
			}
			if m.inFlight[Central] && m.inFlight[Agent] {
				t.Fatalf("run %d: both sides write: %+v", run, *m)
			}
		}
		handovers = max(handovers, int(max(m.own[0], m.own[1])))
	}
	if handovers < 4 {
		t.Errorf("the model never handed over more than %d times: it tests nothing", handovers)
	}
}
