package reconciler

import (
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// Backoff of a cluster whose reconciliation failed (unreachable, or a pair
// Failed): exponential from RetryBase to RetryMax, with ±20% jitter so
// clusters that failed together do not retry together.
const (
	RetryBase = 5 * time.Second
	RetryMax  = 5 * time.Minute
)

// clusterQueue is the work queue of the daemon: keyed by cluster name, so
// a cluster is queued at most once and reconciled by one worker at a time,
// whatever asked for it (a revision, the drift interval, a health change,
// a retry). It also remembers which clusters are due for a drift check.
type clusterQueue struct {
	q     workqueue.TypedRateLimitingInterface[string]
	lanes *lanes

	mu    sync.Mutex
	drift map[string]bool
	// adds counts the adds of each cluster not yet reconciled; a worker
	// takes the count it saw when it got the cluster off on done, so adds
	// during a reconciliation keep the cluster pending (the queue hands it
	// out again).
	adds  map[string]int
	taken map[string]int
	busy  int // clusters being reconciled
	idle  chan struct{}
}

func newClusterQueue() *clusterQueue {
	rl := &jitteredBackoff{base: RetryBase, max: RetryMax, failures: map[string]int{}}
	l := newLanes()
	fifo := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Queue: l})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Queue: fifo})
	return &clusterQueue{
		q: workqueue.NewTypedRateLimitingQueueWithConfig[string](rl,
			workqueue.TypedRateLimitingQueueConfig[string]{DelayingQueue: delaying}),
		lanes: l,
		drift: map[string]bool{},
		adds:  map[string]int{},
		taken: map[string]int{},
		idle:  make(chan struct{}, 1),
	}
}

// add queues a cluster now; withDrift also asks for its drift check.
func (cq *clusterQueue) add(name string, withDrift bool) {
	cq.mu.Lock()
	if withDrift {
		cq.drift[name] = true
	}
	cq.adds[name]++
	cq.mu.Unlock()
	cq.q.Add(name)
}

// addUrgent queues one cluster for a reason of its own (an event, a health
// verdict, a wake): it goes before the clusters a fleet-wide add queued.
func (cq *clusterQueue) addUrgent(name string) {
	cq.lanes.mark(name)
	cq.add(name, false)
}

// retry queues a cluster after its backoff.
func (cq *clusterQueue) retry(name string) { cq.q.AddRateLimited(name) }

// succeeded resets a cluster's backoff.
func (cq *clusterQueue) succeeded(name string) { cq.q.Forget(name) }

// get waits for the next cluster; false when the queue shut down. The
// second result says whether a drift check is due.
func (cq *clusterQueue) get() (string, bool, bool) {
	name, quit := cq.q.Get()
	if quit {
		return "", false, false
	}
	cq.mu.Lock()
	defer cq.mu.Unlock()
	cq.busy++
	cq.taken[name] = cq.adds[name]
	drift := cq.drift[name]
	delete(cq.drift, name)
	return name, drift, true
}

// done ends a cluster's reconciliation; when nothing is queued or being
// reconciled any more, idle receives a signal.
func (cq *clusterQueue) done(name string) {
	cq.mu.Lock()
	cq.busy--
	if cq.adds[name] -= cq.taken[name]; cq.adds[name] <= 0 {
		delete(cq.adds, name)
	}
	delete(cq.taken, name)
	empty := cq.busy == 0 && len(cq.adds) == 0
	cq.mu.Unlock()
	cq.q.Done(name)
	if empty {
		select {
		case cq.idle <- struct{}{}:
		default:
		}
	}
}

// empty reports whether nothing is queued or being reconciled.
func (cq *clusterQueue) empty() bool {
	cq.mu.Lock()
	defer cq.mu.Unlock()
	return cq.busy == 0 && len(cq.adds) == 0
}

func (cq *clusterQueue) shutDown() { cq.q.ShutDown() }

// jitteredBackoff is a per-item exponential backoff with jitter.
type jitteredBackoff struct {
	base, max time.Duration

	mu       sync.Mutex
	failures map[string]int
}

func (b *jitteredBackoff) When(item string) time.Duration {
	b.mu.Lock()
	n := b.failures[item]
	b.failures[item] = n + 1
	b.mu.Unlock()
	d := b.base
	for i := 0; i < n && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

func (b *jitteredBackoff) Forget(item string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.failures, item)
}

func (b *jitteredBackoff) NumRequeues(item string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures[item]
}
