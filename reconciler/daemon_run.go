package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
)

// NewDaemon returns a Daemon over a Reconciler.
func NewDaemon(r *Reconciler, opts DaemonOptions) *Daemon {
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 30 * time.Second
	}
	if opts.StatusInterval <= 0 {
		opts.StatusInterval = 10 * time.Second
	}
	d := &Daemon{r: r, opts: opts, watcher: repo.NewWatcher(opts.Source, opts.Watch), store: newStatusStore(), owner: make(chan struct{}, 1)}
	r.rollouts.load, r.rollouts.record = d.loadRevision, d.store.setRollout
	r.rollouts.sharded = opts.Ownership != nil
	r.agent, r.rollouts.peer = opts.Agent, d.peer
	d.auth = newAuthority(&d.hand, modeRight{agent: opts.Agent, current: r.current}, opts.Ownership,
		turnRight{hand: &d.hand, side: d.side(), on: d.handshakes},
		func(c string) bool { _, ok := d.peer(c); return ok }, r.log)
	return d
}

// RunOnce fetches the newest revision, reconciles every cluster on it
// once (waiting, off the workers, for the health of what it applied, up to
// each add-on's health timeout), commits status and returns the fleet's
// state. It returns ErrUnconverged when some pair did not converge.
func (d *Daemon) RunOnce(ctx context.Context) (PassResult, error) {
	start := time.Now()
	rev, _, err := d.opts.Source.Sync(ctx)
	if err != nil {
		d.r.opts.Metrics.GitFetchErrors.Inc()
		return PassResult{}, err
	}
	d.restore(ctx)
	workCtx, cancel := graceContext(ctx, d.opts.ShutdownGrace)
	defer cancel()
	s := d.startSession(workCtx, ctx, true)
	err = d.load(workCtx, rev, s, true)
	if err == nil {
		s.waitSettled(workCtx)
	}
	s.stop()
	d.handoverTick(context.WithoutCancel(ctx), func(string) {}) // releases, now that nothing is in flight
	d.refreshPeers(ctx)
	res := d.result(start)
	if cerr := d.commitStatus(); err == nil {
		err = cerr
	}
	d.settled(res)
	if err == nil && !res.Converged {
		err = ErrUnconverged
	}
	return res, err
}

// Run follows the branch until ctx is cancelled. Every new revision is
// loaded as soon as it is seen and queues the fleet's clusters; a cluster
// being reconciled on an older revision stops before its next add-on and
// re-plans on the newest.
func (d *Daemon) Run(ctx context.Context) error {
	d.restore(ctx)
	workCtx, cancel := graceContext(ctx, d.opts.ShutdownGrace)
	defer cancel()
	s := d.startSession(workCtx, ctx, false)
	revs := make(chan string, 1)
	watchErr := make(chan error, 1)
	go func() { watchErr <- d.watcher.Run(ctx, d.onEvent(revs)) }()
	err := d.loop(ctx, s, revs, watchErr)
	s.stop()
	d.handoverTick(context.WithoutCancel(ctx), func(string) {}) // releases, now that nothing is in flight
	if cerr := d.commitStatus(); cerr != nil {
		d.r.log.Error("final status commit", "error", cerr)
	}
	return err
}

// loop dispatches revisions, drift checks, status commits and settling
// until ctx ends.
func (d *Daemon) loop(ctx context.Context, s *session, revs <-chan string, watchErr <-chan error) error {
	drift := ticker(d.opts.DriftInterval)
	defer drift.Stop()
	commit := time.NewTicker(d.opts.StatusInterval)
	defer commit.Stop()
	current := ""
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-watchErr:
			if err != nil {
				return fmt.Errorf("watch %s: %w", d.opts.Source.URL(), err)
			}
			return nil
		case rev := <-revs:
			if rev == current || d.ownCommit(ctx, current, rev) {
				current = rev
				continue
			}
			current = rev
			if err := d.load(ctx, rev, s, false); err != nil {
				var refused *RefusedError
				if errors.As(err, &refused) {
					return err
				}
				d.r.log.Error("load revision", "revision", rev, "error", err)
			}
		case <-drift.C:
			s.queueAll(true)
		case <-d.owner:
			d.rebalanced(s)
		case <-commit.C:
			d.refreshPeers(ctx)
			d.handoverTick(ctx, func(name string) { s.q.addUrgent(name) })
			if err := d.commitStatus(); err != nil {
				d.r.log.Error("status commit", "error", err)
			}
		case <-s.q.idle:
			// Every queued cluster was reconciled once: ready, even while
			// add-ons still wait for health.
			d.r.opts.Metrics.SetReady(true)
			if res, ok := s.settle(); ok {
				d.settled(res)
			}
		}
	}
}

func ticker(every time.Duration) *time.Ticker {
	if every <= 0 {
		t := time.NewTicker(time.Hour)
		t.Stop() // never fires
		return t
	}
	return time.NewTicker(every)
}

// onEvent forwards new revisions, the newest replacing any not yet taken.
func (d *Daemon) onEvent(revs chan string) func(repo.Event) {
	return func(ev repo.Event) {
		if ev.Err != nil {
			d.r.opts.Metrics.GitFetchErrors.Inc()
			return // the watcher logged it and keeps the last good revision
		}
		select {
		case <-revs:
		default:
		}
		revs <- ev.Revision
	}
}

// ownCommit reports whether rev differs from prev only in status/, as
// regatta's own status commits on the followed branch do.
func (d *Daemon) ownCommit(ctx context.Context, prev, rev string) bool {
	if prev == "" || d.opts.StatusBranch != d.opts.Source.Branch() {
		return false
	}
	same, err := d.opts.Source.TreesEqualExcept(ctx, prev, rev, status.Dir)
	return err == nil && same
}

// graceContext returns a context that ends grace after ctx does.
func graceContext(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-out.Done():
		}
	})
	return out, func() { stop(); cancel() }
}

// startSession starts Concurrency workers and the health poll on ctx.
func (d *Daemon) startSession(ctx, parent context.Context, once bool) *session {
	s := &session{d: d, q: newClusterQueue(), once: once, parent: parent, stopCh: make(chan struct{})}
	d.r.events.SetNotify(d.onClusterEvent(s))
	d.r.rollouts.setWake(func(cluster string) { s.q.addUrgent(cluster) })
	for range d.r.opts.Concurrency {
		s.wg.Go(func() { s.work(ctx) })
	}
	s.wg.Go(func() { s.pollHealth(ctx) })
	if !once {
		s.ociWake = make(chan struct{}, 1)
		s.wg.Go(func() { s.followOCI(ctx) })
	}
	return s
}

// rebalanced queues every cluster (the workers take the owned ones); the
// next status commit writes the records this daemon now owns.
func (d *Daemon) rebalanced(s *session) {
	d.dropLost()
	d.store.touch()
	s.queueAll(false)
}
