package repo

import (
	"context"
	"time"
)

// Defaults of WatchOptions.
const (
	DefaultInterval    = 30 * time.Second
	DefaultSyncTimeout = 2 * time.Minute
	DefaultDebounce    = 100 * time.Millisecond
)

// WatchOptions configure a Watcher.
type WatchOptions struct {
	// Interval between polls of the remote ref (DefaultInterval).
	Interval time.Duration
	// Timeout of one sync (DefaultSyncTimeout).
	Timeout time.Duration
	// Backoff spaces retries while syncs fail (DefaultBackoff).
	Backoff Backoff
	// Debounce coalesces bursts of file events of a local repository
	// (DefaultDebounce).
	Debounce time.Duration
	// DisableFSNotify polls local repositories too.
	DisableFSNotify bool
}

// DefaultWatchOptions polls every 30s, retries from 1s up to 5m, and
// watches local repositories with fsnotify.
func DefaultWatchOptions() WatchOptions { return WatchOptions{}.withDefaults() }

func (o WatchOptions) withDefaults() WatchOptions {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultSyncTimeout
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	o.Backoff = o.Backoff.withDefaults()
	return o
}

// Event reports a new revision of the followed branch, or a failed sync.
type Event struct {
	// Revision is the new revision; after a failure, the last good one
	// ("" if none was ever fetched).
	Revision string
	// Previous is the revision reported before ("" for the first event).
	Previous string
	// Err is set when a sync failed; the last good revision stays.
	Err error
	// Failures counts consecutive failed syncs; RetryIn is the wait until
	// the next attempt.
	Failures int
	RetryIn  time.Duration
}

// Watcher detects new commits: it syncs the Source at once, then every
// Interval, on Trigger, and, for a local repository, within a second of a
// ref change seen through fsnotify. After a failure it retries with
// exponential backoff, keeping the last good revision.
type Watcher struct {
	src     *Source
	opts    WatchOptions
	trigger chan struct{}
}

// NewWatcher prepares a Watcher; call Run.
func NewWatcher(src *Source, opts WatchOptions) *Watcher {
	return &Watcher{src: src, opts: opts.withDefaults(), trigger: make(chan struct{}, 1)}
}

// Trigger asks for a sync now (a push webhook, say). It never blocks;
// triggers that arrive while one is pending are merged.
func (w *Watcher) Trigger() {
	select {
	case w.trigger <- struct{}{}:
	default:
	}
}

// Run calls fn, from Run's goroutine, for the first revision, for each new
// revision and for each failed sync, until ctx is cancelled; it then
// returns nil. It fails only when the fsnotify watch cannot be set up.
func (w *Watcher) Run(ctx context.Context, fn func(Event)) error {
	changes, stop, err := w.watchLocal(ctx)
	if err != nil {
		return err
	}
	defer stop()
	st := &watchState{}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-w.trigger:
		case <-changes:
		}
		next := w.poll(ctx, st, fn)
		timer.Reset(next)
	}
}

// watchState is what Run remembers between polls.
type watchState struct {
	last     string // revision last reported
	failures int
}

// poll syncs once, reports, and returns the wait until the next poll.
func (w *Watcher) poll(ctx context.Context, st *watchState, fn func(Event)) time.Duration {
	sctx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
	rev, _, err := w.src.Sync(sctx)
	cancel()
	if ctx.Err() != nil {
		return w.opts.Interval
	}
	if err != nil {
		st.failures++
		retry := w.opts.Backoff.Delay(st.failures)
		w.src.log.Warn("sync failed", "url", w.src.URL(), "error", err, "failures", st.failures, "retryIn", retry)
		fn(Event{Revision: rev, Previous: st.last, Err: err, Failures: st.failures, RetryIn: retry})
		return retry
	}
	st.failures = 0
	if rev != st.last {
		fn(Event{Revision: rev, Previous: st.last})
		st.last = rev
	}
	return w.opts.Interval
}
