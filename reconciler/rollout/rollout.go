// Package rollout decides, for one profile with spec.rollout, which of its
// clusters may take the revision being rolled out now. It is pure: given
// each cluster's state, the rollout spec, the control file and the time,
// it returns the clusters admitted, each stage's progress and whether the
// rollout is halted, soaking, waiting for an approval or for a window.
package rollout

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/spec"
)

// State is where one cluster stands in the rollout of a revision.
type State string

// States of a cluster in a rollout.
const (
	// Pending: the cluster is not reached yet; it keeps its last revision.
	Pending State = "Pending"
	// Updating: the cluster takes the revision; it counts against maxUpdate
	// until it is applied and healthy.
	Updating State = "Updating"
	// Done: the revision is applied and healthy.
	Done State = "Done"
	// Failed: the revision failed or stayed unhealthy past its timeout.
	Failed State = "Failed"
)

// Cluster is one cluster of the profile as the rollout sees it.
type Cluster struct {
	Name   string
	Labels map[string]string
	State  State
	// Since is when the cluster became Done (for the stage's soak); zero
	// when unknown (it counts as soaked).
	Since time.Time
	// Touched: a Pending cluster that applied a revision of an earlier
	// rollout that halted. A new revision (a fix, a revert) reaches these
	// first, before any stage order.
	Touched bool
}

// Input is everything one decision depends on.
type Input struct {
	Rollout *spec.Rollout
	// Control is rollouts/<profile>.yaml; nil when there is none.
	Control *spec.RolloutControl
	// Revision is the revision rolled out (approvals name it).
	Revision string
	Clusters []Cluster
	Now      time.Time
}

// Stage progress values.
const (
	StageDone             = "Done"
	StageSoaking          = "Soaking"
	StageRolling          = "Rolling"
	StageWaiting          = "Waiting"
	StageAwaitingApproval = "AwaitingApproval"
	StageOutsideWindow    = "OutsideWindow"
	StageHalted           = "Halted"
	StagePaused           = "Paused"
)

// RestStage names the clusters no stage selects; they go last.
const RestStage = "rest"

// Stage is one stage's clusters and progress.
type Stage struct {
	Name     string
	Clusters []string
	Done     int
	Updating int
	Failed   int
	Waiting  int
	Progress string
	// MaxUpdate is the stage's cap as a count of its clusters.
	MaxUpdate int
}

// Decision is what the rollout allows now.
type Decision struct {
	// Admit are Pending clusters that start taking the revision now.
	Admit []string
	// Stage is the stage the rollout is at ("" when complete).
	Stage  string
	Stages []Stage
	Halted bool
	// Reason says, for people, why no more clusters start (halted,
	// paused, soaking, approval, window, maxUpdate).
	Reason string
	// Complete: every cluster is Done.
	Complete bool
	// Recheck is when the decision may change without a cluster changing
	// (a soak ends, a window opens); zero: only on a cluster change.
	Recheck time.Time
}

// Allowed reports whether the named cluster may render the revision:
// it was reached already or is admitted now.
func (d Decision) Allowed(in Input, name string) bool {
	for _, c := range in.Clusters {
		if c.Name == name {
			return c.State != Pending || slices.Contains(d.Admit, name)
		}
	}
	return false
}

// Decide returns which clusters may take the revision now.
func Decide(in Input) Decision {
	stages := assign(in)
	d := Decision{Stages: make([]Stage, len(stages))}
	for i, s := range stages {
		d.Stages[i] = s.summary()
	}
	if failed := failedClusters(in.Clusters); len(failed) >= in.Rollout.Threshold() {
		d.Halted = true
		d.Reason = fmt.Sprintf("halted: %s failed (failureThreshold %d)", strings.Join(failed, ", "), in.Rollout.Threshold())
		d.Stage = stageOf(stages, failed[0])
		d.mark(d.Stage, StageHalted)
		return d
	}
	if in.Control != nil && in.Control.Spec.Paused {
		d.Reason = "paused by " + in.Control.Source.File
		d.Stage = firstUnfinished(stages)
		d.mark(d.Stage, StagePaused)
		return d
	}
	budget := newBudget(in)
	d.admitTouched(in, budget)
	d.walk(in, stages, budget)
	return d
}

// mark sets the progress of the named stage.
func (d *Decision) mark(name, progress string) {
	for i := range d.Stages {
		if d.Stages[i].Name == name {
			d.Stages[i].Progress = progress
		}
	}
}

func failedClusters(cs []Cluster) []string {
	var out []string
	for _, c := range cs {
		if c.State == Failed {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out
}

// admitTouched admits, within the profile's maxUpdate, the clusters an
// earlier rollout left on a revision the fleet did not finish: a fix or a
// revert reaches them first.
func (d *Decision) admitTouched(in Input, b *budget) {
	for _, c := range in.Clusters {
		if c.Touched && c.State == Pending && b.take(nil) {
			d.Admit = append(d.Admit, c.Name)
		}
	}
}
