package notify

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// withRender gives every pair of the snapshot the rendering hash, and
// moves the fleet to rev (pairs and records too): a commit that changed
// nothing the profile renders from.
func withRender(snap status.Snapshot, rev, hash string) status.Snapshot {
	snap.Fleet.SourceRevision, snap.Fleet.AppliedRevision = rev, rev
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		c.SourceRevision = rev
		ps := append([]status.Profile(nil), c.Profiles...)
		for j := range ps {
			ps[j].Revision, ps[j].RenderHash = rev, hash
		}
		c.Profiles = ps
	}
	return snap
}

// TestUnrelatedCommitKeepsTheFailure: a failing pair whose rendering a
// later commit leaves unchanged (a change elsewhere in the repository) is
// the same failure: no resolution, no second message, and the revert
// still names the commit that broke it, also for a restarted notifier on
// the same ledger. A commit that changes the rendering and still fails is
// a new failure.
func TestUnrelatedCommitKeepsTheFailure(t *testing.T) {
	ctx := context.Background()
	c, b, l := &clock{t: time.Unix(1e9, 0)}, &inbox{}, NewMemoryLedger()
	n := newTestNotifier(l, c, b, alert("ops", spec.AlertOnFailed))
	bad, other, later := strings.Repeat("a1", 20), strings.Repeat("b2", 20), strings.Repeat("c3", 20)
	steps := func(n *Notifier, s status.Snapshot) {
		for range 3 {
			n.Step(ctx, s)
			c.advance(time.Minute)
		}
	}
	steps(n, withRender(fleet(3, 2, bad), bad, "h1"))
	if got := b.take(); len(got) != 1 || !strings.Contains(got[0].Text, "git revert "+bad) {
		t.Fatalf("the failure: %+v, want one message naming the revert of %s", got, bad)
	}
	steps(n, withRender(fleet(3, 2, other), other, "h1"))
	if got := b.take(); len(got) != 0 {
		t.Fatalf("a commit that changed nothing web renders from sent %+v, want nothing", got)
	}
	restarted := newTestNotifier(l, c, b, alert("ops", spec.AlertOnFailed))
	steps(restarted, withRender(fleet(3, 2, later), later, "h1"))
	if got := b.take(); len(got) != 0 {
		t.Fatalf("a restarted notifier sent %+v, want nothing", got)
	}
	steps(restarted, withRender(fleet(3, 0, later), later, "h1"))
	got := b.take()
	if len(got) != 1 || !got[0].Resolved || got[0].Revision != bad {
		t.Fatalf("the fix: %+v, want one resolution of the failure at %s", got, bad)
	}
	steps(restarted, withRender(fleet(3, 1, later), later, "h2"))
	if got := b.take(); len(got) != 1 || got[0].Resolved || got[0].Revision != later {
		t.Fatalf("a new rendering failing: %+v, want a new message at %s", got, later)
	}
}

// TestHaltOfTheSameRenderingIsOneSubject: a commit elsewhere in the
// repository starts a new rollout of the same rendering, which halts
// again: the halt is not told again, and keeps naming the first revision.
func TestHaltOfTheSameRenderingIsOneSubject(t *testing.T) {
	ctx := context.Background()
	c, b := &clock{t: time.Unix(1e9, 0)}, &inbox{}
	n := newTestNotifier(NewMemoryLedger(), c, b, alert("ops", spec.AlertOnRolloutHalted))
	halted := func(rev string) status.Snapshot {
		snap := fleet(2, 1, rev)
		snap.Clusters[0].Profiles[0].Rollout = &status.PairRollout{Revision: rev, Stage: "canary", State: "Failed", Fingerprint: "fp1"}
		snap.Fleet.Rollouts = []status.RolloutStatus{{Profile: "web", Revision: rev, Stage: "canary", Halted: true, Reason: "1 failed"}}
		return snap
	}
	first, second := strings.Repeat("d4", 20), strings.Repeat("e5", 20)
	for _, rev := range []string{first, first, second, second} {
		n.Step(ctx, halted(rev))
		c.advance(time.Minute)
	}
	got := b.take()
	if len(got) != 1 || got[0].Revision != first || !strings.Contains(got[0].Text, "git revert "+first) {
		t.Fatalf("messages %+v, want the one halt at %s", got, first)
	}
}
