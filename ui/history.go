package ui

import (
	"context"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// Frame is the fleet as one status commit holds it.
type Frame struct {
	// Commit is the status branch's commit; empty for a daemon's newest
	// status that is not on the branch yet.
	Commit string
	// Time is the commit's (committer) time.
	Time     time.Time
	Snapshot status.Snapshot
}

// Arrival is when a cluster's record first showed a fleet revision (its
// sourceRevision) on the status branch.
type Arrival struct {
	Cluster  string
	Revision string
	Time     time.Time
	// Commit is the status commit that first showed it.
	Commit string
}

// Entry is one status commit of the timeline.
type Entry struct {
	Commit          string
	Time            time.Time
	SourceRevision  string
	AppliedRevision string
	// Arrivals are the clusters whose record reached a new revision in
	// this commit.
	Arrivals []Arrival
	// Changed counts the cluster records this commit wrote.
	Changed int
	// Folded marks the oldest commit kept when the history before it is
	// gone (folded by --status-history-keep): its Arrivals and Changed are
	// unknown, so empty.
	Folded bool
}

// History is the status branch's history (ui/timeline reads it from Git).
// Its methods are safe for concurrent use.
type History interface {
	// Head is the newest frame.
	Head(ctx context.Context) (Frame, error)
	// At is the frame in force at t: the newest commit at or before t. A
	// t before the oldest commit kept (the history may be folded) gives
	// ErrBeforeHistory.
	At(ctx context.Context, t time.Time) (Frame, error)
	// Frame is the frame of one status commit (a full or abbreviated
	// hash); ErrUnknownCommit when the branch's history lacks it.
	Frame(ctx context.Context, commit string) (Frame, error)
	// Timeline lists up to n status commits, newest first.
	Timeline(ctx context.Context, n int) ([]Entry, error)
	// Parent is the frame of a status commit's first parent: one step
	// back through the history. ErrNoParent when the commit is the
	// branch's first, ErrBeforeHistory when its parent is gone (folded by
	// --status-history-keep), ErrUnknownCommit when the branch lacks it.
	Parent(ctx context.Context, commit string) (Frame, error)
}
