package reconciler

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/agent"
	"github.com/regatta-dev/regatta/spec"
)

// lease is an Ownership whose clusters a test moves.
type lease struct {
	mu    sync.Mutex
	owned map[string]bool
}

func (l *lease) Owns(c string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.owned[c]
}
func (l *lease) OwnsFleet() bool  { return true }
func (l *lease) Identity() string { return "replica-a" }
func (l *lease) set(c string, v bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.owned[c] = v
}

// revisionOf is a revision in force with pushed and pulled clusters.
func revisionOf(pushed, pulled []string) *revision {
	r := &spec.Repository{}
	for _, n := range pushed {
		r.Clusters = append(r.Clusters, &spec.Cluster{Metadata: spec.ObjectMeta{Name: n}})
	}
	for _, n := range pulled {
		c := &spec.Cluster{Metadata: spec.ObjectMeta{Name: n}}
		c.Spec.Mode = spec.ModePull
		r.Clusters = append(r.Clusters, c)
	}
	slices.SortFunc(r.Clusters, func(x, y *spec.Cluster) int { return strings.Compare(x.Metadata.Name, y.Metadata.Name) })
	return &revision{sha: "abc", repo: r}
}

func testAuthority(ag *AgentCluster, shard Ownership, rev *revision, handshakes bool, hand *handover) *authority {
	side := agent.Central
	if ag != nil {
		side = agent.Agent
	}
	return newAuthority(hand, modeRight{agent: ag, current: func() *revision { return rev }}, shard,
		turnRight{hand: hand, side: side, on: func() bool { return handshakes }},
		func(string) bool { return false }, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// TestAuthorityIsEveryRight: a cluster may be reconciled only while each
// right holds: its mode (pushed for the central daemon, the agent's own
// pulled cluster for an agent), the replica's shard, and the handshake's
// turn.
func TestAuthorityIsEveryRight(t *testing.T) {
	rev := revisionOf([]string{"a", "b"}, []string{"p"})
	shard := &lease{owned: map[string]bool{"a": true, "p": true}}
	for _, tc := range []struct {
		name  string
		agent *AgentCluster
		shard Ownership
		turns func(h *handover)
		want  map[string]bool
	}{
		{name: "alone", want: map[string]bool{"a": true, "b": true, "p": false}},
		{name: "sharded", shard: shard, want: map[string]bool{"a": true, "b": false, "p": false}},
		{name: "agent", agent: &AgentCluster{Name: "p"}, want: map[string]bool{"a": false, "p": true}},
		{name: "agent of a pushed cluster", agent: &AgentCluster{Name: "a"}, want: map[string]bool{"a": false}},
		{name: "turns: a released to its agent (turn 1)", turns: func(h *handover) { h.own["a"] = 1 },
			want: map[string]bool{"a": false, "b": true}},
		{name: "turns: b's agent holds it (turn 1), central waits", turns: func(h *handover) { h.other["b"] = 1 },
			want: map[string]bool{"a": true, "b": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hand := &handover{}
			hand.init()
			hand.readAt = rev
			if tc.turns != nil {
				tc.turns(hand)
			}
			a := testAuthority(tc.agent, tc.shard, rev, tc.turns != nil, hand)
			for c, want := range tc.want {
				if got := a.may(c); got != want {
					t.Errorf("may(%s) = %v, want %v", c, got, want)
				}
				if g := a.grant(c); (g != nil) != want {
					t.Errorf("grant(%s) = %v, want granted %v", c, g, want)
				} else if g != nil {
					g.release()
				}
			}
		})
	}
}

// TestGrantHoldsBackARelease: a grant counts as a pass in flight until it
// is released, and a replica's fence ends the pass's context once the
// shard moves away.
func TestGrantHoldsBackARelease(t *testing.T) {
	rev := revisionOf([]string{"a"}, nil)
	shard := &lease{owned: map[string]bool{"a": true}}
	hand := &handover{}
	a := testAuthority(nil, shard, rev, false, hand)
	g := a.grant("a")
	if g == nil {
		t.Fatal("no grant of an owned cluster")
	}
	if n := hand.inFlight["a"]; n != 1 {
		t.Fatalf("a grant counts %d passes in flight, want 1", n)
	}
	if s := a.speaker("a"); !s.Reconciles || s.Name != "replica-a" {
		t.Errorf("speaker = %+v, want this replica reconciling", s)
	}
	ctx, cancel := g.fence(context.Background())
	defer cancel()
	shard.set("a", false)
	select {
	case <-ctx.Done():
	case <-time.After(10 * fencePoll):
		t.Fatal("the pass's context outlived the lost shard")
	}
	if g.held() {
		t.Error("the grant is still held after the shard moved")
	}
	g.release()
	if n := hand.inFlight["a"]; n != 0 {
		t.Fatalf("after release %d passes in flight, want 0", n)
	}
}
