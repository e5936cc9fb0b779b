package reconciler

import (
	"testing"
	"time"
)

// TestClusterQueuePending: a cluster is pending from its add until the
// reconciliation that took it is done; an add while it is being
// reconciled keeps it pending, and the queue hands it out again.
func TestClusterQueuePending(t *testing.T) {
	q := newClusterQueue()
	defer q.shutDown()
	if !q.empty() {
		t.Fatal("a new queue is not empty")
	}
	q.add("a", true)
	if q.empty() {
		t.Fatal("empty right after an add")
	}
	name, drift, ok := q.get()
	if !ok || name != "a" || !drift {
		t.Fatalf("get = %q, drift %v, ok %v", name, drift, ok)
	}
	q.add("a", false) // while a is being reconciled
	q.done("a")
	if q.empty() {
		t.Fatal("empty while an add made during the reconciliation is pending")
	}
	name, drift, ok = q.get()
	if !ok || name != "a" || drift {
		t.Fatalf("second get = %q, drift %v, ok %v", name, drift, ok)
	}
	q.done("a")
	if !q.empty() {
		t.Fatal("not empty after the last reconciliation")
	}
	select {
	case <-q.idle:
	default:
		t.Fatal("no idle signal")
	}
}

func TestJitteredBackoff(t *testing.T) {
	b := &jitteredBackoff{base: time.Second, max: 8 * time.Second, failures: map[string]int{}}
	for i, want := range []time.Duration{1, 2, 4, 8, 8} {
		d := b.When("c")
		lo, hi := time.Duration(float64(want*time.Second)*0.8), time.Duration(float64(want*time.Second)*1.2)
		if d < lo || d > hi {
			t.Errorf("retry %d: %s, want %s ±20%%", i, d, want*time.Second)
		}
	}
	if b.NumRequeues("c") != 5 || b.When("other") > 1200*time.Millisecond {
		t.Error("failures are not counted per cluster")
	}
	b.Forget("c")
	if d := b.When("c"); d > 1200*time.Millisecond {
		t.Errorf("after Forget: %s", d)
	}
}
