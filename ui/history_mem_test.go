package ui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// memHistory is a History in memory for the tests (ui/timeline reads the
// real one from Git): frames oldest first.
type memHistory struct {
	mu     sync.Mutex
	frames []Frame
	// folded: the history before the oldest frame was folded.
	folded bool
}

func (h *memHistory) add(f Frame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.frames = append(h.frames, f)
}

func (h *memHistory) Head(context.Context) (Frame, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.frames) == 0 {
		return Frame{}, errors.New("the status branch has no commits")
	}
	return h.frames[len(h.frames)-1], nil
}

func (h *memHistory) At(_ context.Context, t time.Time) (Frame, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.frames) - 1; i >= 0; i-- {
		if !h.frames[i].Time.After(t) {
			return h.frames[i], nil
		}
	}
	return Frame{}, ErrBeforeHistory
}

func (h *memHistory) Frame(_ context.Context, commit string) (Frame, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.frames {
		if strings.HasPrefix(f.Commit, strings.ToLower(commit)) {
			return f, nil
		}
	}
	return Frame{}, ErrUnknownCommit
}

func (h *memHistory) Timeline(_ context.Context, n int) ([]Entry, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Entry
	for i := len(h.frames) - 1; i >= 0 && len(out) < n; i-- {
		f := h.frames[i]
		e := Entry{Commit: f.Commit, Time: f.Time, SourceRevision: f.Snapshot.Fleet.SourceRevision, AppliedRevision: f.Snapshot.Fleet.AppliedRevision}
		before := map[string]string{}
		if i > 0 {
			for _, c := range h.frames[i-1].Snapshot.Clusters {
				before[c.Cluster] = c.SourceRevision
			}
		}
		for _, c := range f.Snapshot.Clusters {
			if before[c.Cluster] != c.SourceRevision {
				e.Arrivals = append(e.Arrivals, Arrival{Cluster: c.Cluster, Revision: c.SourceRevision, Time: f.Time, Commit: f.Commit})
				e.Changed++
			}
		}
		e.Folded = h.folded && i == 0
		if e.Folded {
			e.Arrivals, e.Changed = nil, 0
		}
		out = append(out, e)
	}
	return out, nil
}

func (h *memHistory) Parent(_ context.Context, commit string) (Frame, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, f := range h.frames {
		switch {
		case f.Commit != commit:
		case i > 0:
			return h.frames[i-1], nil
		case h.folded:
			return Frame{}, ErrBeforeHistory
		default:
			return Frame{}, ErrNoParent
		}
	}
	return Frame{}, ErrUnknownCommit
}

var _ History = (*memHistory)(nil)

// snapshotOf is status.Snapshot with the fleet at revision rev.
func snapshotOf(rev string, clusters ...status.ClusterStatus) status.Snapshot {
	return status.Snapshot{Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: rev}, Clusters: clusters}
}
