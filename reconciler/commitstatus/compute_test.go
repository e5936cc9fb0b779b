package commitstatus

import (
	"fmt"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/reconciler/status"
)

const (
	revA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	revB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func fleet(rev string, clusters ...status.ClusterStatus) status.Snapshot {
	return status.Snapshot{Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: rev}, Clusters: clusters}
}

func cluster(name, rev string, states ...string) status.ClusterStatus {
	c := status.ClusterStatus{Cluster: name, SourceRevision: rev, Reachable: true}
	for i, s := range states {
		c.Profiles = append(c.Profiles, status.Profile{Name: fmt.Sprintf("p%d", i), State: s, Revision: rev})
	}
	return c
}

func TestComputeOverall(t *testing.T) {
	failed := cluster("prod-1", revA, status.StateApplied, status.StateFailed)
	failed.Profiles[1].Error = &status.Error{Object: "Deployment/kyverno/kyverno", Message: "apply failed: forbidden\nmore lines"}
	unreachable := status.ClusterStatus{Cluster: "prod-2", SourceRevision: revA, Error: "dial tcp 10.0.0.1:6443: connection refused"}
	pausedDown := status.ClusterStatus{Cluster: "prod-3", Paused: true, SourceRevision: revB}
	keptOut := fleet(revB, cluster("a", revA, status.StateApplied))
	keptOut.Fleet.AppliedRevision = revA
	keptOut.Fleet.Errors = []status.Error{{File: "profiles/x.yaml", Line: 14, Message: "spec.addons[1].kustomize.path: folder addons/x does not exist"}, {Message: "two"}}
	notYet := fleet(revB, cluster("a", revA, status.StateApplied))
	notYet.Fleet.AppliedRevision = revA
	halted := fleet(revA, cluster("a", revA, status.StateApplied, status.StateWaitingForRollout))
	halted.Fleet.Rollouts = []status.RolloutStatus{{Profile: "p1", Revision: revA, Stage: "prod", Halted: true, Reason: "health gate: error rate 7%"}}
	var many []status.ClusterStatus
	for i := range 5 {
		many = append(many, cluster(fmt.Sprintf("c%d", i), revA, status.StateConflict))
	}
	cases := []struct {
		name  string
		snap  status.Snapshot
		state State
		desc  string
	}{
		{"all applied", fleet(revA, cluster("a", revA, status.StateApplied, status.StateApplied), cluster("b", revA, status.StateApplied)), Success, "3 pairs applied on 2 clusters"},
		{"converged states count as done", fleet(revA, cluster("a", revA, status.StateDryRun, status.StatePaused, status.StateWithdrawn)), Success, "3 pairs applied on 1 cluster"},
		{"progressing", fleet(revA, cluster("a", revA, status.StateApplied, status.StateProgressing)), Pending, "1/2 pairs applied"},
		{"waiting for a dependency or a rollout", fleet(revA, cluster("a", revA, status.StateWaitingForDependency, status.StateWaitingForRollout, status.StateApplied)), Pending, "1/3 pairs applied"},
		{"cluster not yet at the revision", fleet(revB, cluster("a", revB, status.StateApplied), cluster("b", revA, status.StateApplied)), Pending, "1/2 pairs applied"},
		{"revision not in force yet", notYet, Pending, "revision not in force yet"},
		{"a failure at an older revision is pending at the new one", fleet(revB, cluster("a", revB, status.StateApplied), cluster("b", revA, status.StateFailed)), Pending, "1/2 pairs applied"},
		{"a paused cluster counts as converged", fleet(revB, cluster("a", revB, status.StateApplied), pausedDown), Success, "1 pair applied on 2 clusters"},
		{"failed pair", fleet(revA, failed, cluster("b", revA, status.StateProgressing)), Failure, "1 failed: prod-1/p1: Failed: Deployment/kyverno/kyverno: apply failed: forbidden"},
		{"unreachable cluster", fleet(revA, cluster("a", revA, status.StateApplied), unreachable), Failure, "1 failed: prod-2: unreachable: dial tcp 10.0.0.1:6443: connection refused"},
		{"revision kept out", keptOut, Failure, "revision kept out: profiles/x.yaml:14: spec.addons[1].kustomize.path: folder addons/x does not exist (+1 more)"},
		{"halted rollout", halted, Failure, "1 failed: rollout p1 halted: health gate: error rate 7%"},
		{"first errors named, the rest counted", fleet(revA, many...), Failure, "5 failed: c0/p0: Conflict; c1/p0: Conflict; c2/p0: Conflict (+2 more)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sha, sts := Compute(c.snap, Options{TargetURL: "https://x/dash"})
			if sha != c.snap.Fleet.SourceRevision || len(sts) != 1 {
				t.Fatalf("got %s %+v", sha, sts)
			}
			want := Status{Context: DefaultContext, State: c.state, Description: c.desc, TargetURL: "https://x/dash"}
			if sts[0] != want {
				t.Errorf("got  %+v\nwant %+v", sts[0], want)
			}
		})
	}
}

func TestComputeTruncates(t *testing.T) {
	c := cluster("a", revA, status.StateFailed)
	c.Profiles[0].Message = strings.Repeat("é", 300)
	_, sts := Compute(fleet(revA, c), Options{})
	if n := len([]rune(sts[0].Description)); n != DefaultMaxDescription || !strings.HasSuffix(sts[0].Description, "…") {
		t.Errorf("description of %d runes: %q", n, sts[0].Description)
	}
	_, sts = Compute(fleet(revA, c), Options{MaxDescription: 20})
	if n := len([]rune(sts[0].Description)); n != 20 {
		t.Errorf("description of %d runes with a limit of 20", n)
	}
}

func TestComputeNoRevision(t *testing.T) {
	if sha, sts := Compute(status.Snapshot{}, Options{}); sha != "" || sts != nil {
		t.Errorf("a fleet that saw no revision: %s %v", sha, sts)
	}
}

func TestComputeStages(t *testing.T) {
	snap := fleet(revA, cluster("a", revA, status.StateApplied))
	snap.Fleet.Rollouts = []status.RolloutStatus{
		{Profile: "web", Revision: revA, Stage: "production", Stages: []status.StageStatus{
			{Name: "staging", Progress: "Done", Done: 3},
			{Name: "production", Progress: "Rolling", Done: 12, Updating: 4, Waiting: 24},
		}},
		{Profile: "db", Revision: revA, Stage: "canary", Halted: true, Reason: "pair Failed", Stages: []status.StageStatus{
			{Name: "canary", Progress: "Halted", Done: 1, Failed: 1},
		}},
		{Profile: "old", Revision: revB, Stages: []status.StageStatus{{Name: "x", Progress: "Done", Done: 1}}},
	}
	_, sts := Compute(snap, Options{Stages: true})
	want := []Status{
		{Context: "regatta/rollout/web/staging", State: Success, Description: "3/3 applied"},
		{Context: "regatta/rollout/web/production", State: Pending, Description: "12/40 applied, Rolling"},
		{Context: "regatta/rollout/db/canary", State: Failure, Description: "1/2 applied, 1 failed: pair Failed"},
	}
	if len(sts) != 1+len(want) {
		t.Fatalf("got %d statuses: %+v", len(sts), sts)
	}
	for i, w := range want {
		if sts[i+1] != w {
			t.Errorf("stage %d: got %+v, want %+v", i, sts[i+1], w)
		}
	}
	if _, sts := Compute(snap, Options{}); len(sts) != 1 {
		t.Errorf("stages without the option: %+v", sts)
	}
}

// BenchmarkCompute computes the statuses of a 2,000-cluster fleet with 10
// profiles each and two rollouts.
func BenchmarkCompute(b *testing.B) {
	snap := status.Snapshot{Fleet: status.Fleet{SourceRevision: revA, AppliedRevision: revA}}
	for i := range 2000 {
		states := make([]string, 10)
		for j := range states {
			states[j] = status.StateApplied
		}
		if i%100 == 0 {
			states[3] = status.StateProgressing
		}
		snap.Clusters = append(snap.Clusters, cluster(fmt.Sprintf("cluster-%04d", i), revA, states...))
	}
	for _, p := range []string{"web", "db"} {
		snap.Fleet.Rollouts = append(snap.Fleet.Rollouts, status.RolloutStatus{Profile: p, Revision: revA, Stages: []status.StageStatus{
			{Name: "staging", Progress: "Done", Done: 20}, {Name: "production", Progress: "Rolling", Done: 1000, Updating: 980}}})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, sts := Compute(snap, Options{Stages: true}); sts[0].State != Pending {
			b.Fatal(sts[0])
		}
	}
}
