// Package timeline reads the status branch's Git history for the web UI:
// it implements ui.History (the frame at the head, at a time or at a
// commit, and the timeline of status commits with the clusters that
// reached a new revision in each) over a local repository or a remote one
// it fetches.
//
// A frame is made from the cached frame nearest on the branch and the
// files that differ between the two commits (a tree diff), so the frame
// next to one that is known, after a status commit that rewrote 5% of
// 2,000 records, decodes 100 of them. Frames are kept in a small LRU
// cache by commit and never change once made: callers share them and must
// not modify them. A timeline entry is computed once per commit, from the
// files it changed (the records' sourceRevision lines only), and kept
// while the commit is on the branch.
package timeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/ui"
)

// DefaultFrames is how many frames a Reader keeps decoded.
const DefaultFrames = 32

// DefaultEvery is how often Run reads the branch when not told.
const DefaultEvery = 10 * time.Second

// ErrNoBranch: the repository has no status branch (yet).
var ErrNoBranch = errors.New("no status branch")

// Options configure a Reader.
type Options struct {
	// Frames bounds the frames kept decoded (DefaultFrames when 0).
	Frames int
	// Log receives fetch errors and moves of the branch; nil discards.
	Log *slog.Logger
	// Auth and CacheDir configure the Source Open makes for a remote
	// repository (repo.Options.Auth and Dir).
	Auth     repo.Auth
	CacheDir string
}

func (o Options) frames() int {
	if o.Frames <= 0 {
		return DefaultFrames
	}
	return o.Frames
}

func (o Options) log() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}

// Reader is the history of one status branch. It is safe for concurrent
// use. Until Run follows the branch, the head is read once, at the first
// call that needs it.
type Reader struct {
	git    gitSource
	branch string
	log    *slog.Logger
	frames *frameCache

	refreshing sync.Mutex // one read of the branch at a time
	mu         sync.RWMutex
	loaded     bool
	chain      *chain
	entries    map[string]cachedEntry
}

var _ ui.History = (*Reader)(nil)

// gitSource is where a Reader reads the branch: a remote repository it
// fetches, or a local one whose ref it re-reads.
type gitSource interface {
	// head brings the branch up to date and returns its commit and the
	// repository to read it from; found is false without the branch.
	head(ctx context.Context) (sha string, r *repo.Repository, found bool, err error)
	// renew drops what the storage holds after the branch was rewritten
	// (a fold), when the storage is the Reader's own; false when not.
	renew() (bool, error)
	// where names the repository in errors (redacted).
	where() string
}

// New reads branch of a remote repository through src, fetching it at
// every Run tick. src must keep the branch's whole history: make it with
// repo.Options{FullHistory: true} (a daemon's own shallow clone is not
// enough; Open makes the right one).
func New(src *repo.Source, branch string, opts Options) *Reader {
	return newReader(&remote{src: src, branch: branch}, branch, opts)
}

// Local reads branch of the repository of the clone in dir: the local
// branch, else origin/<branch>, as `regatta status` does. Run re-reads
// the ref.
func Local(dir, branch string, opts Options) (*Reader, error) {
	r, err := repo.Open(dir)
	if err != nil {
		return nil, err
	}
	return newReader(&local{dir: dir, branch: branch, repo: r}, branch, opts), nil
}

// Open reads branch at location: the clone in a local folder (Local), or
// a remote repository (any URL repo.NewSource takes, a bare repository's
// folder too) whose branch is fetched with its whole history into memory
// or opts.CacheDir, as New does. In memory, the clone is made again
// after a fold rewrote the branch, so that the folded history does not
// stay in memory.
func Open(location, branch string, opts Options) (*Reader, error) {
	if fi, err := os.Stat(location); err == nil && fi.IsDir() && !isBare(location) {
		return Local(location, branch, opts)
	}
	fresh := func() (*repo.Source, error) {
		return repo.NewSource(repo.Options{URL: location, Branch: branch, Auth: opts.Auth,
			Dir: opts.CacheDir, FullHistory: true, Logger: opts.Log})
	}
	src, err := fresh()
	if err != nil {
		return nil, err
	}
	g := &remote{src: src, branch: branch}
	if opts.CacheDir == "" {
		g.fresh = fresh
	}
	return newReader(g, branch, opts), nil
}

// isBare tells a bare repository's folder (HEAD and objects/ at its top)
// from a clone's, which repo.Open reads.
func isBare(dir string) bool {
	_, head := os.Stat(filepath.Join(dir, "HEAD"))
	objects, err := os.Stat(filepath.Join(dir, "objects"))
	return head == nil && err == nil && objects.IsDir()
}

func newReader(g gitSource, branch string, opts Options) *Reader {
	return &Reader{git: g, branch: branch, log: opts.log(), frames: newFrameCache(opts.frames()),
		chain: &chain{}, entries: map[string]cachedEntry{}}
}

// Run follows the branch until ctx ends: it fetches it (a local
// repository: re-reads the ref) now and every every (<= 0: DefaultEvery),
// and when its head moved decodes the new head frame (from the one before,
// by a tree diff) and then calls onMove, so the pages that follow find it
// ready. Errors are logged and the next tick tries again, so a Git host
// that is down delays the view, no more.
func (r *Reader) Run(ctx context.Context, every time.Duration, onMove func()) {
	if every <= 0 {
		every = DefaultEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var failing string
	for {
		moved, err := r.refresh(ctx)
		if moved {
			_, err = r.Head(ctx)
		}
		failing = r.logOutcome(ctx, err, failing, every)
		if moved && onMove != nil {
			onMove()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// logOutcome logs a read of the branch that failed unlike the one
// before, and the first that works again; it returns the error in force.
func (r *Reader) logOutcome(ctx context.Context, err error, failing string, every time.Duration) string {
	switch {
	case errors.Is(err, ErrNoBranch) || (err != nil && ctx.Err() != nil):
		return failing
	case err != nil && err.Error() != failing:
		r.log.Warn("status branch not read, trying again", "branch", r.branch, "every", every, "error", err)
		return err.Error()
	case err == nil && failing != "":
		r.log.Info("status branch read again", "branch", r.branch)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// refresh reads the branch's head and, when it moved, its new commits.
func (r *Reader) refresh(ctx context.Context) (bool, error) {
	r.refreshing.Lock()
	defer r.refreshing.Unlock()
	sha, g, found, err := r.git.head(ctx)
	if err != nil {
		return false, err
	}
	r.mu.RLock()
	old := r.chain
	r.mu.RUnlock()
	if sha == old.head && found == (old.repo != nil) {
		r.setLoaded()
		return false, nil
	}
	next := &chain{}
	if found {
		if next, err = old.advance(ctx, g, sha); err != nil {
			return false, err
		}
	}
	if _, kept := next.index[old.head]; found && old.head != "" && !kept {
		if next, err = r.renewed(ctx, next); err != nil {
			return false, err
		}
	}
	r.mu.Lock()
	r.chain, r.loaded = next, true
	r.pruneEntries()
	r.mu.Unlock()
	r.log.Debug("status branch moved", "branch", r.branch, "head", sha, "previous", old.head)
	return true, nil
}

// renewed is the chain read again from a new storage after the branch
// was rewritten, or next when the storage is kept.
func (r *Reader) renewed(ctx context.Context, next *chain) (*chain, error) {
	ok, err := r.git.renew()
	if err != nil || !ok {
		return next, err
	}
	sha, g, found, err := r.git.head(ctx)
	if err != nil || !found {
		return &chain{}, err
	}
	r.log.Info("status branch rewritten (a fold of its history): fetched again", "branch", r.branch, "head", sha)
	return (&chain{}).advance(ctx, g, sha)
}

func (r *Reader) setLoaded() {
	r.mu.Lock()
	r.loaded = true
	r.mu.Unlock()
}

// current is the branch as last read, read now if it never was.
func (r *Reader) current(ctx context.Context) (*chain, error) {
	r.mu.RLock()
	c, loaded := r.chain, r.loaded
	r.mu.RUnlock()
	if !loaded {
		if _, err := r.refresh(ctx); err != nil {
			return nil, fmt.Errorf("status branch %s: %w", r.branch, err)
		}
		r.mu.RLock()
		c = r.chain
		r.mu.RUnlock()
	}
	if len(c.commits) == 0 {
		return nil, fmt.Errorf("%w %s in %s: has regatta run and pushed status yet?", ErrNoBranch, r.branch, r.git.where())
	}
	return c, nil
}

// Head is the frame of the branch's newest commit.
func (r *Reader) Head(ctx context.Context) (ui.Frame, error) {
	c, err := r.current(ctx)
	if err != nil {
		return ui.Frame{}, err
	}
	return r.frame(ctx, c, 0)
}

// At is the frame in force at t: the newest commit (down the branch's
// first parents) committed at or before t. A t before the oldest commit
// kept gives ui.ErrBeforeHistory.
func (r *Reader) At(ctx context.Context, t time.Time) (ui.Frame, error) {
	c, err := r.current(ctx)
	if err != nil {
		return ui.Frame{}, err
	}
	for i, cm := range c.commits {
		if !cm.Time.After(t) {
			return r.frame(ctx, c, i)
		}
	}
	oldest := c.commits[len(c.commits)-1]
	return ui.Frame{}, fmt.Errorf("%s: %w (%s, %s)", t.UTC().Format(time.RFC3339), ui.ErrBeforeHistory,
		short(oldest.SHA), oldest.Time.UTC().Format(time.RFC3339))
}

// Frame is the frame of a commit of the branch, by its full or
// abbreviated (at least 4 digits) hash.
func (r *Reader) Frame(ctx context.Context, commit string) (ui.Frame, error) {
	c, err := r.current(ctx)
	if err != nil {
		return ui.Frame{}, err
	}
	i, err := c.find(commit)
	if err != nil {
		return ui.Frame{}, err
	}
	return r.frame(ctx, c, i)
}

// Parent is the frame of a commit's first parent on the branch (from the
// commit's cached frame by one tree diff when walking back). The frames
// it makes are the first the cache forgets, so a walk back does not push
// out the head's.
// ui.ErrNoParent for the branch's first commit, ui.ErrBeforeHistory for
// the oldest one a fold kept.
func (r *Reader) Parent(ctx context.Context, commit string) (ui.Frame, error) {
	c, err := r.current(ctx)
	if err != nil {
		return ui.Frame{}, err
	}
	i, err := c.find(commit)
	if err != nil {
		return ui.Frame{}, err
	}
	p, cm := c.parent(i), c.commits[i]
	switch {
	case p >= 0:
		return r.frameKept(ctx, c, p, true)
	case len(cm.Parents) == 0 && cm.Trailer(repo.TrailerFoldedFrom) == "":
		return ui.Frame{}, fmt.Errorf("status commit %s: %w", short(cm.SHA), ui.ErrNoParent)
	}
	return ui.Frame{}, fmt.Errorf("status commit %s: its parent is %w", short(cm.SHA), ui.ErrBeforeHistory)
}

// short abbreviates a commit hash as Git does by default.
func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
