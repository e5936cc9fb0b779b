package reconciler

import (
	"slices"
	"sync"
)

// lanes is the order under the cluster queue's workqueue: a cluster queued
// for a reason of its own (an event, a health verdict, a rollout's or a
// handover's wake) goes before the clusters queued for a fleet-wide reason
// (a revision, the drift interval, a retry), so one urgent cluster never
// waits behind a fleet-wide change. Within a lane, first in, first out.
// The workqueue calls Push, Touch, Pop and Len under its own lock; mark
// may be called at any time.
type lanes struct {
	mu          sync.Mutex
	marked      map[string]bool // asked for the urgent lane, not yet handed out
	urgent, all []string
}

func newLanes() *lanes { return &lanes{marked: map[string]bool{}} }

// mark asks for the urgent lane for the next time name is queued, or at
// once if it is queued already (the workqueue then calls Touch).
func (l *lanes) mark(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.marked[name] = true
}

func (l *lanes) Push(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.marked[name] {
		l.urgent = append(l.urgent, name)
		return
	}
	l.all = append(l.all, name)
}

// Touch moves a queued cluster that was marked since it was queued to the
// urgent lane.
func (l *lanes) Touch(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.marked[name] {
		return
	}
	if i := slices.Index(l.all, name); i >= 0 {
		l.all = slices.Delete(l.all, i, i+1)
		l.urgent = append(l.urgent, name)
	}
}

func (l *lanes) Pop() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var name string
	if len(l.urgent) > 0 {
		name, l.urgent = l.urgent[0], l.urgent[1:]
	} else {
		name, l.all = l.all[0], l.all[1:]
	}
	delete(l.marked, name)
	return name
}

func (l *lanes) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.urgent) + len(l.all)
}
