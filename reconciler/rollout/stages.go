package rollout

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/regatta-dev/regatta/spec"
	"k8s.io/apimachinery/pkg/labels"
)

// AllStage names the single stage of a rollout that declares none.
const AllStage = "all"

// stageSet is a stage with its clusters, in name order.
type stageSet struct {
	spec     spec.RolloutStage
	clusters []Cluster
}

// assign puts each cluster in the first stage that selects it; the ones
// no stage selects form a last stage.
func assign(in Input) []*stageSet {
	var out []*stageSet
	sels := make([]labels.Selector, len(in.Rollout.Stages))
	for i, s := range in.Rollout.Stages {
		out = append(out, &stageSet{spec: s})
		sels[i], _ = s.ClusterSelector.Compile() // validated by spec
	}
	rest := &stageSet{spec: spec.RolloutStage{Name: RestStage}}
	if len(out) == 0 {
		rest.spec.Name = AllStage
	}
	cs := append([]Cluster(nil), in.Clusters...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	for _, c := range cs {
		st := rest
		for i, sel := range sels {
			if sel != nil && sel.Matches(labels.Set(c.Labels)) {
				st = out[i]
				break
			}
		}
		st.clusters = append(st.clusters, c)
	}
	if len(rest.clusters) > 0 || len(out) == 0 {
		out = append(out, rest)
	}
	return out
}

func (s *stageSet) count(st State) int {
	n := 0
	for _, c := range s.clusters {
		if c.State == st {
			n++
		}
	}
	return n
}

func (s *stageSet) summary() Stage {
	out := Stage{
		Name:      s.spec.Name,
		Done:      s.count(Done),
		Updating:  s.count(Updating),
		Failed:    s.count(Failed),
		Waiting:   s.count(Pending),
		Progress:  StageWaiting,
		MaxUpdate: s.spec.MaxUpdate.Of(len(s.clusters)),
	}
	for _, c := range s.clusters {
		out.Clusters = append(out.Clusters, c.Name)
	}
	if out.Done == len(s.clusters) {
		out.Progress = StageDone
	}
	return out
}

// soakedAt is when the stage's soak ends: its last cluster's Done time
// plus the soak.
func (s *stageSet) soakedAt() time.Time {
	soak, _ := time.ParseDuration(s.spec.Soak) // validated by spec
	var last time.Time
	for _, c := range s.clusters {
		if c.Since.After(last) {
			last = c.Since
		}
	}
	if last.IsZero() || soak <= 0 {
		return time.Time{}
	}
	return last.Add(soak)
}

func stageOf(stages []*stageSet, cluster string) string {
	for _, s := range stages {
		for _, c := range s.clusters {
			if c.Name == cluster {
				return s.spec.Name
			}
		}
	}
	return ""
}

func firstUnfinished(stages []*stageSet) string {
	for _, s := range stages {
		if s.count(Done) < len(s.clusters) {
			return s.spec.Name
		}
	}
	return ""
}

// walk goes through the stages in order: done and soaked stages are
// passed, the first other one is where clusters are admitted.
func (d *Decision) walk(in Input, stages []*stageSet, b *budget) {
	for _, s := range stages {
		if s.count(Done) == len(s.clusters) {
			if end := s.soakedAt(); in.Now.Before(end) {
				d.Stage, d.Recheck = s.spec.Name, end
				d.Reason = fmt.Sprintf("stage %s is healthy and soaks until %s", s.spec.Name, end.UTC().Format(time.RFC3339))
				d.mark(s.spec.Name, StageSoaking)
				return
			}
			continue
		}
		d.Stage = s.spec.Name
		if s.count(Pending) == len(s.clusters) && !d.mayStart(in, s) {
			return
		}
		d.admitStage(s, b)
		return
	}
	d.Complete = true
}

// mayStart checks the gates of a stage that has not started: approval
// and windows.
func (d *Decision) mayStart(in Input, s *stageSet) bool {
	name := s.spec.Name
	if s.spec.Approval && !in.Control.Approved(name, in.Revision) {
		d.Reason = fmt.Sprintf("stage %s waits for approval: rollouts/<profile>.yaml approvals: [{stage: %s, revision: %s}]", name, name, short(in.Revision))
		d.mark(name, StageAwaitingApproval)
		return false
	}
	if !inWindows(in.Rollout.Windows, in.Now) {
		d.Recheck = nextOpening(in.Rollout.Windows, in.Now)
		d.Reason = fmt.Sprintf("stage %s waits for a rollout window", name)
		d.mark(name, StageOutsideWindow)
		return false
	}
	return true
}

func (d *Decision) admitStage(s *stageSet, b *budget) {
	d.mark(s.spec.Name, StageRolling)
	waiting := 0
	for _, c := range s.clusters {
		if c.State != Pending || slices.Contains(d.Admit, c.Name) {
			continue
		}
		if !b.take(s) {
			waiting++
			continue
		}
		d.Admit = append(d.Admit, c.Name)
	}
	if waiting > 0 && d.Reason == "" {
		d.Reason = fmt.Sprintf("stage %s: %d cluster(s) wait for maxUpdate", s.spec.Name, waiting)
	}
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// budget counts clusters updating against the profile's and the stages'
// maxUpdate. Failed clusters count as updating: they are not healthy.
type budget struct {
	left  int
	stage map[string]int
}

func newBudget(in Input) *budget {
	stages := assign(in)
	b := &budget{left: in.Rollout.MaxUpdate.Of(len(in.Clusters)), stage: map[string]int{}}
	for _, s := range stages {
		busy := s.count(Updating) + s.count(Failed)
		b.left -= busy
		b.stage[s.spec.Name] = s.spec.MaxUpdate.Of(len(s.clusters)) - busy
	}
	return b
}

// take reserves one update in the stage (nil: the profile's cap only).
func (b *budget) take(s *stageSet) bool {
	if b.left <= 0 || (s != nil && b.stage[s.spec.Name] <= 0) {
		return false
	}
	b.left--
	if s != nil {
		b.stage[s.spec.Name]--
	}
	return true
}

// Plan returns the stages a rollout takes the given clusters through, in
// order, each with its clusters and cap: what `regatta plan` prints.
func Plan(ro *spec.Rollout, clusters []Cluster) []Stage {
	stages := assign(Input{Rollout: ro, Clusters: clusters})
	out := make([]Stage, 0, len(stages))
	for _, s := range stages {
		out = append(out, s.summary())
	}
	return out
}
