package apply

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// The drift queue handles a key re-added while it is handled once more
// afterwards (never twice at once), retries a failed key, and runs no
// worker once nothing is queued.
func TestDriftQueueSemantics(t *testing.T) {
	var wg sync.WaitGroup
	var inA, overlap atomic.Int32
	calls := map[string]int{}
	var mu sync.Mutex
	release := make(chan struct{})
	var q *driftQueue
	q = newDriftQueue(2, &wg, func(k driftKey) error {
		if k.profile == "a" {
			if inA.Add(1) > 1 {
				overlap.Add(1)
			}
			defer inA.Add(-1)
		}
		mu.Lock()
		calls[k.profile]++
		n := calls[k.profile]
		mu.Unlock()
		switch {
		case k.profile == "a" && n == 1:
			q.add(k) // re-added while handled
			<-release
		case k.profile == "fail" && n == 1:
			return errors.New("first attempt fails")
		}
		return nil
	})
	a, fail := driftKey{profile: "a"}, driftKey{profile: "fail"}
	q.add(a)
	q.add(fail)
	close(release)
	testenv.WaitFor(t, 10*time.Second, "every key handled and the workers gone", func() bool {
		mu.Lock()
		defer mu.Unlock()
		q.mu.Lock()
		defer q.mu.Unlock()
		return calls["a"] == 2 && calls["fail"] == 2 && q.workers == 0
	})
	wg.Wait()
	if overlap.Load() != 0 {
		t.Errorf("a key was handled by two workers at once")
	}
	q.shutDown()
	q.add(a)
	if q.workers != 0 || len(q.keys) != 0 {
		t.Errorf("a shut queue took a key")
	}
}
