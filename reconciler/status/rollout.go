package status

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
}
