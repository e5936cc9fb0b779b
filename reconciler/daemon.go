package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
)

// DaemonOptions configures the loop of `regatta run`.
type DaemonOptions struct {
	Source *repo.Source
	Watch  repo.WatchOptions
	// DriftInterval re-runs a pass on the revision in force: classification,
	// a full dry-run drift check of drift-detected pairs, and re-apply of
	// whatever changed. Zero disables it.
	DriftInterval time.Duration
	// StatusBranch receives the status files; when it is the followed
	// branch they go to its status/ folder and regatta's own commits never
	// trigger a pass. Empty disables status commits.
	StatusBranch string
	StatusAuthor repo.Signature
	// ShutdownGrace is how long an in-flight pass may go on after the
	// context is cancelled (SIGTERM) before it is cancelled too.
	ShutdownGrace time.Duration
	// OnPass, when set, is called after each pass and status commit.
	OnPass func(PassResult)
}

// ErrUnconverged is returned by RunOnce when some pair did not converge.
var ErrUnconverged = errors.New("not every (profile, cluster) pair converged")

// Daemon follows the repository and runs passes on new revisions and on
// the drift interval.
type Daemon struct {
	r       *Reconciler
	opts    DaemonOptions
	watcher *repo.Watcher
}

// NewDaemon returns a Daemon over a Reconciler.
func NewDaemon(r *Reconciler, opts DaemonOptions) *Daemon {
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 30 * time.Second
	}
	return &Daemon{r: r, opts: opts, watcher: repo.NewWatcher(opts.Source, opts.Watch)}
}

// Trigger asks for an immediate fetch (a push webhook); it never blocks.
func (d *Daemon) Trigger() { d.watcher.Trigger() }

// RunOnce fetches, runs one full pass and commits status. It returns
// ErrUnconverged when some pair did not converge.
func (d *Daemon) RunOnce(ctx context.Context) (PassResult, error) {
	rev, _, err := d.opts.Source.Sync(ctx)
	if err != nil {
		d.r.opts.Metrics.GitFetchErrors.Inc()
		return PassResult{}, err
	}
	res, err := d.pass(ctx, rev, false)
	if err == nil && !res.Converged {
		err = ErrUnconverged
	}
	return res, err
}

// Run follows the branch until ctx is cancelled. A new revision starts a
// pass as soon as it is seen; a pass in flight finishes first (or is
// cancelled after the shutdown grace), then the newest revision runs.
func (d *Daemon) Run(ctx context.Context) error {
	revs := make(chan string, 1)
	watchErr := make(chan error, 1)
	go func() { watchErr <- d.watcher.Run(ctx, d.onEvent(revs)) }()
	var drift <-chan time.Time
	if d.opts.DriftInterval > 0 {
		t := time.NewTicker(d.opts.DriftInterval)
		defer t.Stop()
		drift = t.C
	}
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
			d.logPassErr(d.pass(ctx, rev, false))
		case <-drift:
			if current != "" {
				d.logPassErr(d.pass(ctx, current, true))
			}
		}
	}
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

func (d *Daemon) logPassErr(_ PassResult, err error) {
	if err != nil {
		d.r.log.Error("pass", "error", err)
	}
}

// pass runs one pass and commits its status. The pass survives ctx's
// cancellation for ShutdownGrace; the status commit is never cut short.
func (d *Daemon) pass(ctx context.Context, rev string, drift bool) (PassResult, error) {
	passCtx, cancel := graceContext(ctx, d.opts.ShutdownGrace)
	defer cancel()
	tree, err := d.opts.Source.Tree(passCtx, rev)
	if err != nil {
		return PassResult{}, fmt.Errorf("read revision %s: %w", rev, err)
	}
	res := d.r.pass(passCtx, rev, tree, drift)
	err = d.commitStatus(res)
	if d.opts.OnPass != nil {
		d.opts.OnPass(res)
	}
	d.r.opts.Metrics.SetReady(true)
	return res, err
}

// graceContext returns a context that ends ShutdownGrace after ctx does.
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

// commitStatus writes the status files as one commit, when they changed.
func (d *Daemon) commitStatus(res PassResult) error {
	if d.opts.StatusBranch == "" {
		return nil
	}
	files, err := status.Files(res.Snapshot)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rev := res.Snapshot.Fleet.SourceRevision
	out, err := d.opts.Source.CommitAndPush(ctx, repo.CommitRequest{
		Branch: d.opts.StatusBranch, Prefix: status.Dir, Files: files, Prune: true,
		Author: d.opts.StatusAuthor, Message: "regatta: status of " + status.ShortRevision(rev),
		Trailers: []repo.Trailer{{Key: repo.TrailerSourceRevision, Value: rev}},
	})
	if err != nil {
		return fmt.Errorf("commit status: %w", err)
	}
	if out.Committed {
		d.r.opts.Metrics.StatusCommits.Inc()
		d.r.log.Info("status committed", "branch", d.opts.StatusBranch, "commit", status.ShortRevision(out.SHA), "attempts", out.Attempts)
	}
	return nil
}
