package notify

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// inbox collects what a Notifier delivers.
type inbox struct {
	mu  sync.Mutex
	got []Message
}

func (b *inbox) deliver(m Message, _ spec.Notification) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, m)
}

func (b *inbox) take() []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.got
	b.got = nil
	return out
}

// clock is a test's time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func alert(name string, on ...string) *spec.Alert {
	a := &spec.Alert{Metadata: spec.ObjectMeta{Name: name}}
	a.Spec.On = on
	a.Spec.Notifications = []spec.Notification{{Name: "chat", Type: spec.NotifyWebhook}}
	return a
}

// fleet is a snapshot of n clusters with profile web, the first failed of
// them Failed at rev.
func fleet(n, failed int, rev string) status.Snapshot {
	snap := status.Snapshot{Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: rev}}
	for i := range n {
		p := status.Profile{Name: "web", State: status.StateApplied, Revision: rev}
		if i < failed {
			p.State = status.StateFailed
			p.Error = &status.Error{Object: "Deployment/web/web", Message: fmt.Sprintf("boom %d", i)}
		}
		snap.Clusters = append(snap.Clusters, status.ClusterStatus{Cluster: fmt.Sprintf("c%04d", i),
			SourceRevision: rev, Reachable: true, Profiles: []status.Profile{p}})
	}
	return snap
}

func newTestNotifier(l Ledger, c *clock, b *inbox, alerts ...*spec.Alert) *Notifier {
	n := New(Options{Ledger: l, Now: c.now, Deliver: b.deliver})
	n.SetAlerts(alerts)
	return n
}

// TestFleetWideFailureIsOneMessage: a change failing on 800 of 1,000
// clusters, as status commits reveal it bit by bit, is one message naming
// the revision, the profile, the first errors, the count and the revert;
// its fix is one resolution; a restarted notifier on the same ledger
// sends nothing again.
func TestFleetWideFailureIsOneMessage(t *testing.T) {
	ctx := context.Background()
	c, b, l := &clock{t: time.Unix(1e9, 0)}, &inbox{}, NewMemoryLedger()
	n := newTestNotifier(l, c, b, alert("ops", spec.AlertOnFailed))
	rev := strings.Repeat("ab", 20)
	for _, failed := range []int{100, 500, 800} {
		n.Step(ctx, fleet(1000, failed, rev))
		c.advance(10 * time.Second)
	}
	n.Step(ctx, fleet(1000, 800, rev))
	got := b.take()
	if len(got) != 1 {
		t.Fatalf("%d messages for one failing change, want 1: %+v", len(got), got)
	}
	m := got[0]
	if m.Count != 800 || m.Profile != "web" || m.Revision != rev || len(m.Details) != maxDetails {
		t.Errorf("message = %+v", m)
	}
	for _, want := range []string{"profile web failed on 800 clusters at ababab", "git revert " + rev, "c0000: Deployment/web/web: boom 0", "and 790 more"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("message text lacks %q:\n%s", want, m.Text)
		}
	}
	again := newTestNotifier(l, c, b, alert("ops", spec.AlertOnFailed))
	for range 4 {
		again.Step(ctx, fleet(1000, 800, rev))
		c.advance(10 * time.Second)
	}
	if got := b.take(); len(got) != 0 {
		t.Fatalf("a restart sent %d messages already sent: %+v", len(got), got)
	}
	again.Step(ctx, fleet(1000, 0, rev))
	if got := b.take(); len(got) != 0 {
		t.Fatalf("a moment without the failure resolved it: %+v", got)
	}
	c.advance(time.Minute)
	again.Step(ctx, fleet(1000, 0, rev))
	got = b.take()
	if len(got) != 1 || !got[0].Resolved || got[0].Count != 800 {
		t.Fatalf("after the fix: %+v, want one resolution of 800 clusters", got)
	}
	again.Step(ctx, fleet(1000, 0, rev))
	if got := b.take(); len(got) != 0 {
		t.Fatalf("the resolution was sent again: %+v", got)
	}
}

// TestFailureThatDoublesSendsAgain: a subject already told sends again
// only when its clusters double, so a fleet-wide failure is at most a few
// messages however it unfolds.
func TestFailureThatDoublesSendsAgain(t *testing.T) {
	ctx := context.Background()
	c, b := &clock{t: time.Unix(1e9, 0)}, &inbox{}
	n := newTestNotifier(NewMemoryLedger(), c, b, alert("ops"))
	rev := strings.Repeat("cd", 20)
	for _, failed := range []int{2, 2, 2, 2, 3, 4, 7, 8, 9, 1000} {
		n.Step(ctx, fleet(1000, failed, rev))
		c.advance(20 * time.Second)
	}
	var counts []int
	for _, m := range b.take() {
		counts = append(counts, m.Count)
	}
	if fmt.Sprint(counts) != "[2 4 8 1000]" {
		t.Fatalf("messages for counts %v, want [2 4 8 1000]", counts)
	}
}

// TestHaltedRolloutNamesStageAndRevert: a halted canary is one message
// with the stage and the revert; a stage awaiting approval names the file
// to commit.
func TestHaltedRolloutNamesStageAndRevert(t *testing.T) {
	ctx := context.Background()
	c, b := &clock{t: time.Unix(1e9, 0)}, &inbox{}
	n := newTestNotifier(NewMemoryLedger(), c, b, alert("ops"))
	rev := strings.Repeat("ef", 20)
	snap := fleet(3, 0, rev)
	snap.Fleet.Rollouts = []status.RolloutStatus{
		{Profile: "web", Revision: rev, Stage: "canary", Halted: true, Reason: "2 failed of 2 (failureThreshold 1)"},
		{Profile: "api", Revision: rev, Stage: "prod", Stages: []status.StageStatus{{Name: "prod", Progress: "AwaitingApproval"}}},
	}
	n.Step(ctx, snap)
	c.advance(time.Minute)
	n.Step(ctx, snap)
	got := b.take()
	if len(got) != 2 {
		t.Fatalf("%d messages, want the halt and the approval: %+v", len(got), got)
	}
	text := got[0].Text + "\n" + got[1].Text
	for _, want := range []string{"rollout of web halted at stage canary", "git revert " + rev,
		"rollout of api awaits approval for stage prod", "rollouts/api.yaml", "{stage: prod, revision: " + rev + "}"} {
		if !strings.Contains(text, want) {
			t.Errorf("messages lack %q:\n%s", want, text)
		}
	}
}

// TestHaltNamesItsFailedClusters: a halt's message names and counts the
// clusters whose pair failed in the halted rollout, not those of an older
// rollout nor those still waiting.
func TestHaltNamesItsFailedClusters(t *testing.T) {
	ctx := context.Background()
	c, b := &clock{t: time.Unix(1e9, 0)}, &inbox{}
	n := newTestNotifier(NewMemoryLedger(), c, b, alert("ops", spec.AlertOnRolloutHalted))
	rev, old := strings.Repeat("ef", 20), strings.Repeat("01", 20)
	snap := fleet(4, 0, rev)
	for i, st := range []struct{ rev, state string }{{rev, "Failed"}, {rev, "Done"}, {old, "Failed"}, {rev, "Pending"}} {
		snap.Clusters[i].Profiles[0].Rollout = &status.PairRollout{Revision: st.rev, Stage: "canary", State: st.state}
	}
	snap.Fleet.Rollouts = []status.RolloutStatus{{Profile: "web", Revision: rev, Stage: "canary", Halted: true, Reason: "halted: c0000 failed (failureThreshold 1)"}}
	n.Step(ctx, snap)
	c.advance(time.Minute)
	n.Step(ctx, snap)
	got := b.take()
	if len(got) != 1 || got[0].Count != 1 || len(got[0].Clusters) != 1 || got[0].Clusters[0] != "c0000" || !strings.Contains(got[0].Text, "clusters: c0000") {
		t.Fatalf("messages %+v, want one halt naming c0000 alone", got)
	}
}
