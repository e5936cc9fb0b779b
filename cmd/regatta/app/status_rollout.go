package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// writeRolloutsText is the terminal's form of the dashboard's Rollouts
// section: per rolling profile its revision, stage and state (halted,
// waiting for approval, soaking...), why, and what to do next.
func writeRolloutsText(w io.Writer, rs []status.RolloutStatus) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintln(w, "rollouts:")
	for _, r := range rs {
		fmt.Fprintf(w, "  %s at revision %s: %s\n", r.Profile, status.ShortRevision(r.Revision), rolloutState(r))
		if r.Reason != "" {
			fmt.Fprintf(w, "    why: %s\n", r.Reason)
		}
		if next := rolloutNext(r); next != "" {
			fmt.Fprintf(w, "    next: %s\n", next)
		}
	}
	fmt.Fprintln(w)
}

// rolloutState is the stage and its progress, with the clusters done,
// updating and waiting over every stage.
func rolloutState(r status.RolloutStatus) string {
	if r.Complete {
		return "complete"
	}
	var done, updating, waiting, failed int
	for _, s := range r.Stages {
		done, updating, waiting, failed = done+s.Done, updating+s.Updating, waiting+s.Waiting, failed+s.Failed
	}
	state := "stage " + dash(r.Stage) + " " + stageProgress(r)
	counts := fmt.Sprintf("%d done, %d updating, %d waiting", done, updating, waiting)
	if failed > 0 {
		counts += fmt.Sprintf(", %d failed", failed)
	}
	return state + " (" + counts + ")"
}

// stageProgress is the current stage's progress; Halted when the rollout
// halted.
func stageProgress(r status.RolloutStatus) string {
	if r.Halted {
		return "Halted"
	}
	for _, s := range r.Stages {
		if s.Name == r.Stage {
			return s.Progress
		}
	}
	return "Rolling"
}

// rolloutNext says what a person can do, when the rollout waits on one.
func rolloutNext(r status.RolloutStatus) string {
	switch p := stageProgress(r); {
	case r.Complete:
		return ""
	case r.Halted:
		return fmt.Sprintf("commit a fix or a revert of profile %s: it starts a new rollout (clusters this one reached go first)", r.Profile)
	case p == "AwaitingApproval" || strings.Contains(r.Reason, "waits for approval"):
		return fmt.Sprintf("approve by committing rollouts/%s.yaml with approvals: [{stage: %s, revision: %s}]", r.Profile, r.Stage, r.Revision)
	case p == "Paused":
		return fmt.Sprintf("resume by setting spec.paused: false in rollouts/%s.yaml (or deleting it)", r.Profile)
	case p == "OutsideWindow":
		return "nothing: the stage starts when its rollout window opens"
	}
	return ""
}
