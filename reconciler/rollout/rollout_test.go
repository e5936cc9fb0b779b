package rollout

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/spec"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) // a Tuesday

const rev = "3f1c2a9d0000000000000000000000000000beef"

// threeStages is the acceptance fleet's rollout: canary 1, staging 2,
// production 6 with maxUpdate 2 and an approval.
func threeStages() *spec.Rollout {
	sel := func(v string) spec.LabelSelector {
		return spec.LabelSelector{MatchLabels: map[string]string{"stage": v}}
	}
	return &spec.Rollout{Stages: []spec.RolloutStage{
		{Name: "canary", ClusterSelector: sel("canary"), Soak: "1s"},
		{Name: "staging", ClusterSelector: sel("staging"), Soak: "1s"},
		{Name: "production", ClusterSelector: sel("production"), MaxUpdate: &spec.MaxUpdate{Count: 2}, Approval: true},
	}}
}

// fleet returns the 9 clusters, all Pending, then applies the states
// given as "name=State" or "name=State@-2s" (Done since now-2s) or
// "name=Pending!" (touched).
func fleet(states ...string) []Cluster {
	var cs []Cluster
	add := func(name, stage string) {
		cs = append(cs, Cluster{Name: name, Labels: map[string]string{"stage": stage}, State: Pending})
	}
	add("canary-1", "canary")
	add("staging-1", "staging")
	add("staging-2", "staging")
	for _, n := range []string{"prod-1", "prod-2", "prod-3", "prod-4", "prod-5", "prod-6"} {
		add(n, "production")
	}
	for _, s := range states {
		name, st, _ := strings.Cut(s, "=")
		st, ago, _ := strings.Cut(st, "@")
		touched := strings.HasSuffix(st, "!")
		for i := range cs {
			if cs[i].Name != name {
				continue
			}
			cs[i].State, cs[i].Touched = State(strings.TrimSuffix(st, "!")), touched
			if ago != "" {
				d, _ := time.ParseDuration(ago)
				cs[i].Since = t0.Add(d)
			}
		}
	}
	return cs
}

func all(state string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + "=" + state
	}
	return out
}

func approved(stage string) *spec.RolloutControl {
	return &spec.RolloutControl{Spec: spec.RolloutControlSpec{Approvals: []spec.Approval{{Stage: stage, Revision: spec.CommitPrefix(rev[:8])}}}}
}

func TestDecide(t *testing.T) {
	staged := all("Done@-5s", "canary-1", "staging-1", "staging-2")
	tests := []struct {
		name     string
		rollout  *spec.Rollout
		control  *spec.RolloutControl
		clusters []Cluster
		admit    []string
		stage    string
		progress string
		halted   bool
		complete bool
		recheck  time.Time
	}{
		{name: "a new revision starts with the canary", clusters: fleet(), admit: []string{"canary-1"}, stage: "canary", progress: StageRolling},
		{name: "the canary updating holds the rest", clusters: fleet("canary-1=Updating"), stage: "canary", progress: StageRolling},
		{name: "a healthy canary soaks", clusters: fleet("canary-1=Done@-500ms"), stage: "canary", progress: StageSoaking, recheck: t0.Add(500 * time.Millisecond)},
		{name: "after the soak staging starts, whole", clusters: fleet("canary-1=Done@-2s"), admit: []string{"staging-1", "staging-2"}, stage: "staging", progress: StageRolling},
		{name: "production waits for its approval", clusters: fleet(staged...), stage: "production", progress: StageAwaitingApproval},
		{name: "an approval for another revision does not count", clusters: fleet(staged...), stage: "production", progress: StageAwaitingApproval,
			control: &spec.RolloutControl{Spec: spec.RolloutControlSpec{Approvals: []spec.Approval{{Stage: "production", Revision: "aaaaaaaa"}}}}},
		{name: "approved production goes 2 at a time", clusters: fleet(staged...), control: approved("production"),
			admit: []string{"prod-1", "prod-2"}, stage: "production", progress: StageRolling},
		{name: "a production cluster done frees one slot", clusters: fleet(append(staged, "prod-1=Done@-1s", "prod-2=Updating")...), control: approved("production"),
			admit: []string{"prod-3"}, stage: "production", progress: StageRolling},
		{name: "a started stage goes on without its approval", clusters: fleet(append(staged, "prod-1=Done@-1s")...),
			admit: []string{"prod-2", "prod-3"}, stage: "production", progress: StageRolling},
		{name: "a failed canary halts with 8 untouched", clusters: fleet("canary-1=Failed"), stage: "canary", progress: StageHalted, halted: true},
		{name: "a failure in production halts there", clusters: fleet(append(staged, "prod-1=Failed", "prod-2=Updating")...), control: approved("production"),
			stage: "production", progress: StageHalted, halted: true},
		{name: "failureThreshold 2 tolerates one failure", rollout: withThreshold(threeStages(), 2),
			clusters: fleet(append(staged, "prod-1=Failed")...), control: approved("production"),
			admit: []string{"prod-2"}, stage: "production", progress: StageRolling},
		{name: "a revert reaches the touched clusters first", clusters: fleet("canary-1=Pending!", "staging-1=Pending!"),
			admit: []string{"canary-1", "staging-1"}, stage: "canary", progress: StageRolling},
		{name: "paused admits nothing", clusters: fleet(), control: &spec.RolloutControl{Spec: spec.RolloutControlSpec{Paused: true}},
			stage: "canary", progress: StagePaused},
		{name: "every cluster done is complete", clusters: fleet(all("Done@-1s", "canary-1", "staging-1", "staging-2", "prod-1", "prod-2", "prod-3", "prod-4", "prod-5", "prod-6")...),
			complete: true},
		{name: "profile maxUpdate caps a stage", rollout: withMax(threeStages(), spec.MaxUpdate{Count: 1}),
			clusters: fleet("canary-1=Done@-2s"), admit: []string{"staging-1"}, stage: "staging", progress: StageRolling},
		{name: "a percent of the stage", rollout: withStageMax(threeStages(), 2, spec.MaxUpdate{Percent: 50, IsPercent: true}),
			clusters: fleet(staged...), control: approved("production"),
			admit: []string{"prod-1", "prod-2", "prod-3"}, stage: "production", progress: StageRolling},
		{name: "no stages: one stage of all, 2 at a time", rollout: &spec.Rollout{MaxUpdate: &spec.MaxUpdate{Count: 2}},
			clusters: fleet(), admit: []string{"canary-1", "prod-1"}, stage: AllStage, progress: StageRolling},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := tt.rollout
			if ro == nil {
				ro = threeStages()
			}
			d := Decide(Input{Rollout: ro, Control: tt.control, Revision: rev, Clusters: tt.clusters, Now: t0})
			if !reflect.DeepEqual(d.Admit, tt.admit) {
				t.Errorf("admit = %v, want %v (reason %q)", d.Admit, tt.admit, d.Reason)
			}
			if d.Stage != tt.stage || d.Halted != tt.halted || d.Complete != tt.complete {
				t.Errorf("stage %q halted %v complete %v, want %q %v %v (reason %q)", d.Stage, d.Halted, d.Complete, tt.stage, tt.halted, tt.complete, d.Reason)
			}
			if got := progressOf(d, tt.stage); tt.stage != "" && got != tt.progress {
				t.Errorf("stage %s progress %q, want %q (reason %q)", tt.stage, got, tt.progress, d.Reason)
			}
			if !d.Recheck.Equal(tt.recheck) {
				t.Errorf("recheck %v, want %v", d.Recheck, tt.recheck)
			}
		})
	}
}

func progressOf(d Decision, stage string) string {
	for _, s := range d.Stages {
		if s.Name == stage {
			return s.Progress
		}
	}
	return ""
}

func withThreshold(r *spec.Rollout, n int) *spec.Rollout { r.FailureThreshold = &n; return r }

func withMax(r *spec.Rollout, m spec.MaxUpdate) *spec.Rollout { r.MaxUpdate = &m; return r }

func withStageMax(r *spec.Rollout, i int, m spec.MaxUpdate) *spec.Rollout {
	r.Stages[i].MaxUpdate = &m
	return r
}

// TestRestStage: clusters no stage selects go last, after every stage.
func TestRestStage(t *testing.T) {
	cs := append(fleet(all("Done@-5s", "canary-1", "staging-1", "staging-2")...), Cluster{Name: "lab", State: Pending})
	ro := threeStages()
	ro.Stages = ro.Stages[:2]
	for i := range cs {
		if cs[i].Labels["stage"] == "production" {
			cs[i].Labels = nil // unstaged too
		}
	}
	d := Decide(Input{Rollout: ro, Revision: rev, Clusters: cs, Now: t0})
	if d.Stage != RestStage || len(d.Admit) != 7 {
		t.Fatalf("stage %q admit %v, want the 7 unstaged clusters in %q", d.Stage, d.Admit, RestStage)
	}
	if !d.Allowed(Input{Clusters: cs}, "canary-1") || !d.Allowed(Input{Clusters: cs}, "lab") {
		t.Errorf("a done and an admitted cluster must be allowed")
	}
}

// TestStagesSummary counts each stage's clusters by state.
func TestStagesSummary(t *testing.T) {
	d := Decide(Input{Rollout: threeStages(), Revision: rev, Clusters: fleet("canary-1=Done@-5s", "staging-1=Updating"), Now: t0})
	want := []Stage{
		{Name: "canary", Clusters: []string{"canary-1"}, Done: 1, Progress: StageDone, MaxUpdate: 1},
		{Name: "staging", Clusters: []string{"staging-1", "staging-2"}, Updating: 1, Waiting: 1, Progress: StageRolling, MaxUpdate: 2},
		{Name: "production", Clusters: []string{"prod-1", "prod-2", "prod-3", "prod-4", "prod-5", "prod-6"}, Waiting: 6, Progress: StageWaiting, MaxUpdate: 2},
	}
	if !reflect.DeepEqual(d.Stages, want) {
		t.Errorf("stages\n got %+v\nwant %+v", d.Stages, want)
	}
	if !reflect.DeepEqual(d.Admit, []string{"staging-2"}) {
		t.Errorf("admit %v", d.Admit)
	}
}
