package status

import "time"

// StateWaitingForRollout is a pair the profile's rollout has not reached
// yet and that holds nothing of the profile: nothing is applied until its
// stage starts.
const StateWaitingForRollout = "WaitingForRollout"

// PairRollout is where one pair stands in its profile's rollout.
type PairRollout struct {
	// Revision is the revision the rollout brings (approvals name it);
	// the pair's own Revision is what it has applied.
	Revision string `json:"revision" yaml:"revision"`
	Stage    string `json:"stage" yaml:"stage"`
	// State is Pending (not reached: the pair keeps the revision it last
	// applied), Updating, Done or Failed.
	State string `json:"state" yaml:"state"`
	// Reason says why the rollout does not go on, when it waits or halted.
	Reason string `json:"reason,omitempty" yaml:"reason,omitempty"`
	// Fingerprint identifies the rollout (what the profile renders from
	// at Revision), so that another process reading this record (the
	// agents of pulled clusters, the central daemon) knows it is the same
	// rollout even when it first saw it at another commit.
	Fingerprint string `json:"fingerprint,omitempty" yaml:"fingerprint,omitempty"`
	// Since is when the pair became Done (soaks count from it).
	Since *time.Time `json:"since,omitempty" yaml:"since,omitempty"`
}

// RolloutStatus is where one profile's rollout stands, in status/fleet.yaml.
type RolloutStatus struct {
	Profile string `json:"profile" yaml:"profile"`
	// Revision is the revision the rollout brings.
	Revision string `json:"revision" yaml:"revision"`
	// Stage is the stage it is at; empty once complete.
	Stage    string `json:"stage,omitempty" yaml:"stage,omitempty"`
	Halted   bool   `json:"halted,omitempty" yaml:"halted,omitempty"`
	Complete bool   `json:"complete,omitempty" yaml:"complete,omitempty"`
	// Reason says why no more clusters start now (halted and why,
	// soaking, awaiting approval, outside a window, maxUpdate).
	Reason string        `json:"reason,omitempty" yaml:"reason,omitempty"`
	Stages []StageStatus `json:"stages" yaml:"stages"`
}

// StageStatus counts one stage's clusters.
type StageStatus struct {
	Name string `json:"name" yaml:"name"`
	// Progress is Done, Soaking, Rolling, Waiting, AwaitingApproval,
	// OutsideWindow, Halted or Paused.
	Progress string `json:"progress" yaml:"progress"`
	Done     int    `json:"done" yaml:"done"`
	Updating int    `json:"updating" yaml:"updating"`
	Waiting  int    `json:"waiting" yaml:"waiting"`
	Failed   int    `json:"failed,omitempty" yaml:"failed,omitempty"`
}
