package reconciler

import (
	"fmt"
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

// TestUrgentClusterGoesFirst: a cluster queued for a reason of its own (an
// event, a health verdict) is handed out before the clusters a fleet-wide
// add queued earlier, whether it was not queued yet, already queued behind
// them, or being reconciled when the urgent add came.
func TestUrgentClusterGoesFirst(t *testing.T) {
	q := newClusterQueue()
	defer q.shutDown()
	for i := range 100 {
		q.add(fmt.Sprintf("c%03d", i), false)
	}
	next := func(want string) {
		t.Helper()
		name, _, ok := q.get()
		if !ok || name != want {
			t.Fatalf("get = %q (ok %v), want %q", name, ok, want)
		}
	}
	q.addUrgent("event-dest") // not queued yet
	next("event-dest")
	q.addUrgent("c050") // queued behind 49 others
	next("c050")
	next("c000")        // then the fleet in its order
	q.addUrgent("c000") // being reconciled: first once it is done
	q.done("c000")
	next("c000")
	next("c001")
	for _, n := range []string{"event-dest", "c050", "c000", "c001"} {
		q.done(n)
	}
	q.add("c001", false) // a fleet-wide add after the urgent one was served
	for i := 2; i < 100; i++ {
		if i == 50 {
			continue
		}
		next(fmt.Sprintf("c%03d", i))
	}
	next("c001")
}
