package apply

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// driftQueue is the work queue of a drift watcher with client-go's
// workqueue semantics (a key is queued once, never handled by two workers
// at once, and handled again when re-added meanwhile; failures retry with
// per-key exponential backoff), but no goroutine while idle: workers start
// when keys arrive and end when none is left, and a retry waits on a
// timer. A fleet daemon has a watcher per cluster, nearly all idle; client-
// go's rate-limited queue keeps three goroutines per queue and its two
// workers waiting (about 40 KiB of stacks and buffers per cluster).
type driftQueue struct {
	handle     func(driftKey) error
	maxWorkers int
	limiter    workqueue.TypedRateLimiter[driftKey]
	// wg counts the workers (Stop waits for them).
	wg *sync.WaitGroup

	mu         sync.Mutex
	keys       []driftKey
	dirty      map[driftKey]bool // queued, or re-added while handled
	processing map[driftKey]bool
	workers    int
	shut       bool
}

func newDriftQueue(workers int, wg *sync.WaitGroup, handle func(driftKey) error) *driftQueue {
	return &driftQueue{handle: handle, maxWorkers: workers, wg: wg,
		limiter: workqueue.NewTypedItemExponentialFailureRateLimiter[driftKey](100*time.Millisecond, time.Minute),
		dirty:   map[driftKey]bool{}, processing: map[driftKey]bool{}}
}

// add queues a key, starting a worker when fewer than maxWorkers run.
func (q *driftQueue) add(k driftKey) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shut || q.dirty[k] {
		return
	}
	q.dirty[k] = true
	if q.processing[k] {
		return // queued again when its handling ends
	}
	q.keys = append(q.keys, k)
	if q.workers < q.maxWorkers {
		q.workers++
		q.wg.Go(q.work)
	}
}

// work handles keys until none is queued.
func (q *driftQueue) work() {
	for {
		k, ok := q.take()
		if !ok {
			return
		}
		err := q.handle(k)
		if err != nil {
			time.AfterFunc(q.limiter.When(k), func() { q.add(k) })
		} else {
			q.limiter.Forget(k)
		}
		q.done(k)
	}
}

// take returns the next key, or ends the worker (false).
func (q *driftQueue) take() (driftKey, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.keys) == 0 || q.shut {
		q.workers--
		return driftKey{}, false
	}
	k := q.keys[0]
	q.keys[0] = driftKey{}
	q.keys = q.keys[1:]
	if len(q.keys) == 0 {
		q.keys = nil // let the backing array go
	}
	q.processing[k] = true
	delete(q.dirty, k)
	return k, true
}

// done ends a key's handling, queueing it again if it was re-added.
func (q *driftQueue) done(k driftKey) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, k)
	if q.dirty[k] && !q.shut {
		q.keys = append(q.keys, k)
	}
}

// shutDown drops the queued keys; workers end after their current key.
func (q *driftQueue) shutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shut = true
	q.keys = nil
}
