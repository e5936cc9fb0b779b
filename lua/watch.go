package lua

import (
	"runtime/metrics"
	"sync"
	"time"
)

// allocWatch is a Runner's memory watchdog. While at least one call runs, a
// goroutine reads the Go runtime's cumulative heap allocation counter every
// period and flags each call whose allocations since it started exceed the
// limit; the call's guard then stops the script at its next instruction.
// The goroutine exits one period after the last call ends.
//
// Go cannot count allocations per goroutine, so a call is charged with
// everything the process allocated while it ran. Calls last microseconds to
// milliseconds, so what other goroutines allocate meanwhile stays far below a
// limit of hundreds of MiB; a limit close to the process's allocation rate
// times the timeout would give false alarms.
type allocWatch struct {
	limit   uint64
	period  time.Duration
	mu      sync.Mutex
	active  map[*guard]uint64 // call -> allocation counter at its start
	running bool
	last    uint64 // counter at the latest sample
}

func newAllocWatch(limit int64) *allocWatch {
	return &allocWatch{limit: uint64(limit), period: time.Millisecond, active: map[*guard]uint64{}}
}

// start begins watching g.
func (w *allocWatch) start(g *guard) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running {
		w.last = heapAllocs()
		w.running = true
		go w.loop()
	}
	w.active[g] = w.last
}

// stop ends watching g.
func (w *allocWatch) stop(g *guard) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.active, g)
}

func (w *allocWatch) loop() {
	t := time.NewTicker(w.period)
	defer t.Stop()
	for range t.C {
		if !w.sample() {
			return
		}
	}
}

// sample flags the calls over the limit; false means no call is left and
// the watchdog has stopped.
func (w *allocWatch) sample() bool {
	now := heapAllocs()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = now
	if len(w.active) == 0 {
		w.running = false
		return false
	}
	for g, base := range w.active {
		if now-base > w.limit {
			g.overMem.Store(true)
		}
	}
	return true
}

// heapAllocs reads the cumulative bytes allocated on the Go heap.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
