package reconciler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
)

// DaemonOptions configures the loop of `regatta run`.
type DaemonOptions struct {
	Source *repo.Source
	Watch  repo.WatchOptions
	// DriftInterval queues every cluster for a reconciliation on the
	// revision in force with classification and a full drift check of its
	// drift-detected pairs. Zero disables it.
	DriftInterval time.Duration
	// StatusBranch receives the status files; when it is the followed
	// branch they go to its status/ folder and regatta's own commits never
	// queue work. Empty disables status commits (and the restore of what
	// an earlier daemon knew).
	StatusBranch string
	StatusAuthor repo.Signature
	// StatusInterval spaces status commits: at most one per interval,
	// carrying every record that changed since the last (default 10s).
	StatusInterval time.Duration
	// ShutdownGrace is how long the clusters being reconciled may go on
	// after the context is cancelled (SIGTERM) before they are cancelled
	// too.
	ShutdownGrace time.Duration
	// Ownership, when set, shards the fleet among replicas: this daemon
	// reconciles, watches and records only the clusters it owns, and
	// writes the fleet-wide status only when it owns the fleet.
	Ownership Ownership
	// OnPass, when set, is called each time the fleet settles (nothing
	// queued, nothing being reconciled, no add-on waiting for health) after
	// work was done, with the status of that moment; RunOnce calls it
	// after its status commit.
	OnPass func(PassResult)
	// Agent, when set, makes this daemon the agent of one pulled cluster
	// (spec.mode: pull; reconciler/pull.go): it reconciles that cluster
	// only, with the given config, refuses a revision that does not mark
	// it pulled, and commits only its record to StatusBranch (its own
	// ref). Without it, pulled clusters are never reconciled.
	Agent *AgentCluster
	// Peers, when set, reads the records of the clusters this daemon does
	// not reconcile: shown in its status, read by its rollouts' gates.
	Peers Peers
}

// PassResult is the state of the fleet when it settled.
type PassResult struct {
	// Snapshot is the status of every cluster and of the fleet.
	Snapshot status.Snapshot
	// Converged is true when the newest revision is in force and every
	// pair is Applied (or DryRun, Paused, Withdrawn), with no cluster
	// unreachable.
	Converged bool
	// Duration is the time from the first work queued to the settling.
	Duration time.Duration
}

// ErrUnconverged is returned by RunOnce when some pair did not converge.
var ErrUnconverged = errors.New("not every (profile, cluster) pair converged")

// Daemon follows the repository. Each cluster is reconciled on its own by
// one of Options.Concurrency workers, from a queue keyed by cluster: a new
// revision, the drift interval, a health change or a retry queues the
// clusters concerned, and no cluster waits for another. Status is
// committed every StatusInterval while records change.
type Daemon struct {
	r       *Reconciler
	opts    DaemonOptions
	watcher *repo.Watcher
	store   *statusStore

	mu       sync.Mutex
	restored bool   // the status branch was read
	inForce  string // the revision in force by the status branch, at start
	// converged is the revision each cluster last converged on (see
	// unchanged).
	converged map[string]*revision
	// committed is the store version of the last status commit.
	committed uint64
	commitMu  sync.Mutex
	// owner receives OwnershipChanged's signals.
	owner chan struct{}
	// peers are the records of the clusters other processes reconcile.
	peers map[string]status.ClusterStatus
}

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
	return d
}

// Trigger asks for an immediate fetch (a push webhook); it never blocks.
func (d *Daemon) Trigger() { d.watcher.Trigger() }

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

// settled reports a settled fleet: metrics, readiness, OnPass.
func (d *Daemon) settled(res PassResult) {
	d.r.record(res)
	d.r.opts.Metrics.SetReady(true)
	if d.opts.OnPass != nil {
		d.opts.OnPass(res)
	}
}

// result is the fleet's state now.
func (d *Daemon) result(start time.Time) PassResult {
	snap, _ := d.store.snapshot()
	res := PassResult{Snapshot: snap, Duration: time.Since(start)}
	res.Converged = len(snap.Fleet.Errors) == 0 && snap.Fleet.AppliedRevision != "" &&
		snap.Fleet.AppliedRevision == snap.Fleet.SourceRevision && converged(snap.Clusters)
	return res
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

// commitStatus writes the status files as one commit, when records
// changed since the last one. It is never cut short by a cancelled
// context.
func (d *Daemon) commitStatus() error {
	if d.opts.StatusBranch == "" {
		return nil
	}
	d.commitMu.Lock()
	defer d.commitMu.Unlock()
	snap, version := d.store.snapshot()
	if version == d.committed || snap.Fleet.SourceRevision == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	files, del, prune, err := d.statusFiles(ctx, snap)
	if err != nil {
		return err
	}
	rev := snap.Fleet.SourceRevision
	out, err := d.opts.Source.CommitAndPush(ctx, repo.CommitRequest{
		Branch:   d.opts.StatusBranch,
		Prefix:   status.Dir,
		Files:    files,
		Delete:   del,
		Prune:    prune,
		Author:   d.opts.StatusAuthor,
		Message:  "regatta: status of " + status.ShortRevision(rev),
		Trailers: []repo.Trailer{{Key: repo.TrailerSourceRevision, Value: rev}},
		Rewrite:  d.writeRecord,
	})
	if err != nil {
		return fmt.Errorf("commit status: %w", err)
	}
	d.committed = version
	if out.Committed {
		d.r.opts.Metrics.StatusCommits.Inc()
		d.r.log.Info("status committed", "branch", d.opts.StatusBranch, "commit", status.ShortRevision(out.SHA), "attempts", out.Attempts)
	}
	return nil
}
