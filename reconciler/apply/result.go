package apply

import (
	"fmt"
	"time"

	"github.com/fluxcd/cli-utils/pkg/object"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// State is the outcome of one (profile, cluster) pass.
type State string

// States of a Result. The reconciler sets WaitingForDependency and Paused;
// this package sets the others.
const (
	// StateApplied: every object applied and healthy (or nothing to do).
	StateApplied State = "Applied"
	// StateProgressing: applied, but some object did not become healthy
	// within the health timeout; the next pass checks again.
	StateProgressing State = "Progressing"
	// StateWaitingForDependency: a profile this one depends on is not ready.
	StateWaitingForDependency State = "WaitingForDependency"
	// StateFailed: an apply, delete or health check failed, or the cluster
	// was unreachable.
	StateFailed State = "Failed"
	// StateConflict: another profile owns an object this one renders.
	StateConflict State = "Conflict"
	// StateDryRun: changes were computed, not made.
	StateDryRun State = "DryRun"
	// StateWithdrawn: the profile's objects were deleted or released.
	StateWithdrawn State = "Withdrawn"
	// StatePaused: the cluster is paused; nothing was done.
	StatePaused State = "Paused"
)

// Action is what a pass did (or, in DryRun, would do) to one object.
type Action string

// Actions of an ObjectChange.
const (
	ActionCreated    Action = "created"
	ActionConfigured Action = "configured"
	ActionUnchanged  Action = "unchanged"
	ActionDeleted    Action = "deleted"
	// ActionSkipped: left alone (conflict, prune disabled, ownership moved).
	ActionSkipped Action = "skipped"
	// ActionReleased: ownership labels removed (LeavePolicies).
	ActionReleased Action = "released"
)

// ObjectRef identifies an object in a cluster.
type ObjectRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// RefOf returns the reference of an object.
func RefOf(obj *unstructured.Unstructured) ObjectRef {
	gvk := obj.GroupVersionKind()
	return ObjectRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// String formats the reference as ssa does: Kind/namespace/name, or
// Kind/name for cluster-scoped objects.
func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// GroupVersionKind returns the reference's GVK.
func (r ObjectRef) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// key identifies the object regardless of its API version.
func (r ObjectRef) key() ObjectRef {
	r.Version = ""
	return r
}

func (r ObjectRef) objMetadata() object.ObjMetadata {
	return object.ObjMetadata{Namespace: r.Namespace, Name: r.Name,
		GroupKind: schema.GroupKind{Group: r.Group, Kind: r.Kind}}
}

// stub returns an empty object carrying only the reference.
func (r ObjectRef) stub() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.GroupVersionKind())
	u.SetNamespace(r.Namespace)
	u.SetName(r.Name)
	return u
}

// ObjectChange is what happened to one object.
type ObjectChange struct {
	Object ObjectRef `json:"object"`
	Addon  string    `json:"addon,omitempty"`
	Action Action    `json:"action"`
	// Diff is a unified diff (live → desired) of a configured object in
	// DryRun, with Secret values redacted.
	Diff string `json:"diff,omitempty"`
	// Message explains a skip or an ownership change.
	Message string `json:"message,omitempty"`
}

// Counts tallies the actions of a pass.
type Counts struct {
	Created    int `json:"created"`
	Configured int `json:"configured"`
	Unchanged  int `json:"unchanged"`
	Deleted    int `json:"deleted"`
	Skipped    int `json:"skipped,omitempty"`
}

func (c *Counts) add(a Action) {
	switch a {
	case ActionCreated:
		c.Created++
	case ActionConfigured:
		c.Configured++
	case ActionUnchanged:
		c.Unchanged++
	case ActionDeleted:
		c.Deleted++
	case ActionSkipped:
		c.Skipped++
	}
}

// Health summarises the health of the objects a pass waited for.
type Health struct {
	Healthy     int `json:"healthy"`
	Progressing int `json:"progressing,omitempty"`
	Degraded    int `json:"degraded,omitempty"`
	Suspended   int `json:"suspended,omitempty"`
	// Unhealthy lists "Kind/ns/name: Status: message" for objects that were
	// not healthy at the end of the wait (at most 10).
	Unhealthy []string `json:"unhealthy,omitempty"`
}

// Conflict names an object another profile owns.
type Conflict struct {
	Object    ObjectRef `json:"object"`
	Addon     string    `json:"addon,omitempty"`
	Owner     string    `json:"owner"`
	OwnerTier int       `json:"ownerTier"`
	// OwnerFleet is set when another fleet owns the object.
	OwnerFleet string `json:"ownerFleet,omitempty"`
}

// Result is the one record of a (profile, cluster) pass from which status,
// metrics and logs are derived.
type Result struct {
	Cluster    string `json:"cluster"`
	Profile    string `json:"profile"`
	State      State  `json:"state"`
	Revision   string `json:"revision,omitempty"`
	RenderHash string `json:"renderHash,omitempty"`
	Counts     Counts `json:"counts"`
	Health     Health `json:"health"`
	// Err is the error with its object and cause, wrapped with cluster and
	// profile (a *PairError); nil unless State is Failed or Conflict.
	Err error `json:"-"`
	// Error is Err's message, for serialisation.
	Error string `json:"error,omitempty"`
	// Changes lists every object that was not unchanged; in DryRun, every
	// object.
	Changes   []ObjectChange `json:"changes,omitempty"`
	Conflicts []Conflict     `json:"conflicts,omitempty"`
	// DriftCorrections counts the drift corrections made on this pair since
	// the Manager started.
	DriftCorrections int `json:"driftCorrections,omitempty"`
	// Skipped is true when nothing was applied: unchanged render hash on a
	// healthy pair, or a OneTime profile already applied.
	Skipped bool `json:"skipped,omitempty"`
	// Waiting says what a Progressing Async pass waits for (add-on, objects
	// and deadline), or that a newer revision superseded it.
	Waiting  string        `json:"waiting,omitempty"`
	Duration time.Duration `json:"-"`
}

func newResult(cluster string, req Request) Result {
	return Result{Cluster: cluster, Profile: req.Profile, Revision: req.Revision, RenderHash: req.RenderHash}
}

// fail sets state Failed and the error, wrapped with cluster and profile.
func (r *Result) fail(err error) {
	r.State = StateFailed
	r.setErr(err)
}

func (r *Result) setErr(err error) {
	if err == nil {
		return
	}
	r.Err = &PairError{Cluster: r.Cluster, Profile: r.Profile, Err: err}
	r.Error = r.Err.Error()
}

// record adds a change and counts it.
func (r *Result) record(ch ObjectChange) {
	r.Counts.add(ch.Action)
	if ch.Action != ActionUnchanged {
		r.Changes = append(r.Changes, ch)
	}
}

// String is a one-line summary for logs.
func (r Result) String() string {
	s := fmt.Sprintf("cluster %s profile %s: %s (created %d, configured %d, unchanged %d, deleted %d)",
		r.Cluster, r.Profile, r.State, r.Counts.Created, r.Counts.Configured, r.Counts.Unchanged, r.Counts.Deleted)
	if r.Error != "" {
		s += ": " + r.Error
	}
	return s
}
