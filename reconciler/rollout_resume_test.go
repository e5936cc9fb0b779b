package reconciler

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"testing/fstest"
	"time"

	"github.com/regatta-dev/regatta/reconciler/metrics"
	"github.com/regatta-dev/regatta/reconciler/rollout"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// TestRolloutResumedAfterRestart: a restarted daemon continues the
// rollout the status branch records when the profile renders from the
// same inputs since (its revision stays the one approvals name), and
// starts over at the revision in force when the profile changed or the
// recorded revision cannot be read.
func TestRolloutResumedAfterRestart(t *testing.T) {
	tree := hashedTree{fstest.MapFS{"addons/web/cm.yaml": {Data: []byte("kind: ConfigMap\n")}}}
	profile := func(timeout string) *spec.Profile {
		p := &spec.Profile{Spec: spec.ProfileSpec{HealthTimeout: timeout, Rollout: &spec.Rollout{}}}
		p.Metadata.Name = "web"
		return p
	}
	cases := []struct {
		name     string
		recorded string // the status branch's rollout revision
		earlier  *spec.Profile
		want     string
	}{
		{name: "same inputs: resumed", recorded: "r1", earlier: profile("1m"), want: "r1"},
		{name: "profile changed: new rollout", recorded: "r1", earlier: profile("2m"), want: "r2"},
		{name: "recorded revision unreadable", recorded: "gone", earlier: profile("1m"), want: "r2"},
		{name: "recorded is the revision in force", recorded: "r2", earlier: profile("1m"), want: "r2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ro := newRollouts(metrics.New(), slog.New(slog.DiscardHandler), time.Now)
			ro.load = func(_ context.Context, sha string) (*revision, error) {
				if sha != "r1" {
					return nil, fmt.Errorf("no commit %s", sha)
				}
				return &revision{sha: "r1", tree: tree, repo: &spec.Repository{Profiles: []*spec.Profile{tc.earlier}}}, nil
			}
			ro.resumeFrom([]status.RolloutStatus{{Profile: "web", Revision: tc.recorded}}, nil)
			ro.observeResumed(context.Background(), &revision{sha: "r2", tree: tree}, profile("1m"))
			if got := ro.profiles["web"].target; got != tc.want {
				t.Errorf("rollout revision %s, want %s", got, tc.want)
			}
			ro.observeResumed(context.Background(), &revision{sha: "r2", tree: tree}, profile("1m"))
			if got := ro.profiles["web"].target; got != tc.want {
				t.Errorf("second pass: rollout revision %s, want %s", got, tc.want)
			}
		})
	}
}

// hashedTree is a tree with Git-like tree hashes (one per folder), as the
// fingerprint of a revision reads them.
type hashedTree struct{ fstest.MapFS }

func (h hashedTree) TreeHash(name string) (string, error) { return "tree-of-" + name, nil }

// TestHaltedRolloutStaysHaltedAfterRestart: a rollout the status branch
// records as halted, with a pair that failed at its revision, admits no
// cluster after a restart until that cluster is seen again; one that was
// not halted goes on.
func TestHaltedRolloutStaysHaltedAfterRestart(t *testing.T) {
	tree := hashedTree{fstest.MapFS{"addons/web/cm.yaml": {Data: []byte("kind: ConfigMap\n")}}}
	prof := &spec.Profile{Spec: spec.ProfileSpec{Rollout: &spec.Rollout{}}}
	prof.Metadata.Name = "web"
	members := []rollout.Cluster{{Name: "c1"}, {Name: "c2"}, {Name: "c3"}}
	records := []status.ClusterStatus{
		{Cluster: "c1", Profiles: []status.Profile{{Name: "web", Revision: "r2", State: status.StateFailed}}},
		{Cluster: "c2", Profiles: []status.Profile{{Name: "web", Revision: "r1", State: status.StateApplied}}},
	}
	for _, halted := range []bool{true, false} {
		ro := newRollouts(metrics.New(), slog.New(slog.DiscardHandler), time.Now)
		ro.resumeFrom([]status.RolloutStatus{{Profile: "web", Revision: "r2", Halted: halted}}, records)
		rev := &revision{sha: "r2", tree: tree}
		ro.observeResumed(context.Background(), rev, prof)
		fp := fingerprint(rev, prof)
		if got := ro.admit(prof, fp, "c2", members, nil); got == halted {
			t.Errorf("recorded halted=%v: c2 admitted=%v", halted, got)
		}
		if halted && !ro.reached("web", fp, "c1") {
			t.Error("the cluster that failed before the restart is not counted as reached")
		}
	}
}
