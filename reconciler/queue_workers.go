package reconciler

import (
	"context"
	"sync"
	"time"
)

// session is the daemon's workers and health poll over one queue, for
// the life of Run or of one RunOnce.
type session struct {
	d    *Daemon
	q    *clusterQueue
	once bool // RunOnce: no retries
	// parent ends the taking of new work (SIGTERM); the workers' own
	// context ends a grace period later.
	parent context.Context
	wg     sync.WaitGroup
	stopCh chan struct{}
	// ociWake tells followOCI of a new revision in force (nil: RunOnce).
	ociWake chan struct{}

	mu    sync.Mutex
	since time.Time // of the first work queued since the fleet last settled
}

// stop shuts the queue down and waits for the workers: a cluster being
// reconciled finishes (or is cancelled with the workers' context).
func (s *session) stop() {
	close(s.stopCh)
	s.q.shutDown()
	s.wg.Wait()
}

func (s *session) work(ctx context.Context) {
	for {
		name, drift, ok := s.q.get()
		if !ok {
			return
		}
		if s.parent.Err() == nil {
			s.reconcile(ctx, name, drift)
		}
		s.q.done(name)
	}
}

// reconcile reconciles one cluster on the revision in force and stores
// its status. A cluster superseded by a newer revision mid-way is queued
// again at once; one that failed is retried after its backoff.
func (s *session) reconcile(ctx context.Context, name string, drift bool) {
	rev := s.d.r.current()
	if rev == nil {
		return
	}
	c := rev.repo.Cluster(name)
	if c == nil {
		return // left the repository meanwhile
	}
	g := s.d.auth.grant(name)
	if g == nil {
		return // another replica's, or another process's turn
	}
	defer g.release()
	ctx, cancel := g.fence(ctx)
	defer cancel()
	owner := s.d.auth.name()
	if !drift {
		if st, ok := s.d.unchanged(ctx, rev, c); ok {
			st.Owner = owner
			s.d.store.setCluster(st)
			s.d.settledOn(name, rev, st, false)
			return
		}
	}
	start := time.Now()
	out := s.d.r.reconcileCluster(ctx, rev, c, drift, func() bool { return s.d.r.current() != rev || !g.held() })
	if !g.held() {
		s.d.r.opts.Apply.Forget(name) // drift watches it may have started
		return
	}
	out.status.Owner = owner
	if out.superseded {
		s.q.add(name, drift)
		return
	}
	s.d.settledOn(name, rev, out.status, out.retry)
	s.d.store.setCluster(out.status)
	s.d.r.recordCluster(out, time.Since(start))
	switch {
	case out.retry && !s.once && ctx.Err() == nil:
		s.q.retry(name)
	case !out.retry:
		s.q.succeeded(name)
	}
}

// queueAll queues every cluster of the revision in force.
func (s *session) queueAll(drift bool) {
	rev := s.d.r.current()
	if rev == nil {
		return
	}
	names := make([]string, 0, len(rev.repo.Clusters))
	for _, c := range rev.repo.Clusters {
		names = append(names, c.Metadata.Name)
	}
	s.queue(names, drift)
}

// queue queues clusters for a fleet-wide reason (a revision, the drift
// interval, an OCI artifact that moved).
func (s *session) queue(names []string, drift bool) {
	s.mu.Lock()
	if s.since.IsZero() {
		s.since = time.Now()
	}
	s.mu.Unlock()
	for _, name := range names {
		s.q.add(name, drift)
	}
}

// pollHealth checks, every health poll interval and off the workers, the
// add-ons waiting for health, and queues the clusters where one turned
// healthy, degraded or ran out of time.
func (s *session) pollHealth(ctx context.Context) {
	t := time.NewTicker(s.d.r.opts.Apply.HealthPollInterval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stopCh:
			return
		case <-t.C:
			s.d.r.opts.Apply.PollHealth(ctx, func(cluster string) { s.q.addUrgent(cluster) })
		}
	}
}

// settled reports whether the fleet is idle: nothing queued or being
// reconciled, and no add-on waiting for health within its timeout.
func (s *session) settled() bool {
	return s.q.empty() && !s.d.r.opts.Apply.Awaiting()
}

// settle returns the fleet's state when it just settled after work.
func (s *session) settle() (PassResult, bool) {
	if !s.settled() {
		return PassResult{}, false
	}
	s.mu.Lock()
	since := s.since
	s.since = time.Time{}
	s.mu.Unlock()
	if since.IsZero() {
		return PassResult{}, false
	}
	return s.d.result(since), true
}

// waitSettled returns once the fleet settled, or ctx ended.
func (s *session) waitSettled(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for !s.settled() {
		select {
		case <-ctx.Done():
			return
		case <-s.q.idle:
		case <-t.C:
		}
	}
}
