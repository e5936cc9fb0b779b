package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/ui"
)

// uiSource is where the web UI reads the status branch: a remote
// repository (repoURL, fetched), or the local repository in dir.
type uiSource struct {
	repoURL, dir, branch string
	git                  *gitFlags
	// pending: the branch may not exist yet (a daemon makes it with its
	// first status commit); it is read when it appears.
	pending bool
}

// newUIHistory is the History the web UI reads and the loop that follows
// the branch (calling onMove when its head moves) until ctx ends.
//
// It serves the branch's newest commit only (branchHead); ui/timeline,
// the branch's whole history with arrivals, takes its place here.
func newUIHistory(ctx context.Context, src uiSource, log *slog.Logger) (ui.History, func(context.Context, time.Duration, func()), error) {
	h, err := openBranchHead(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	return h, func(ctx context.Context, every time.Duration, onMove func()) { h.follow(ctx, every, onMove, log) }, nil
}

// branchHead is a History of the status branch's newest commit.
type branchHead struct {
	repo *repo.Repository
	// resolve names the branch's newest commit; fetch first fetches it.
	resolve func(ctx context.Context, fetch bool) (string, error)

	mu   sync.Mutex
	last ui.Frame
}

func openBranchHead(ctx context.Context, src uiSource) (*branchHead, error) {
	if src.repoURL != "" {
		return remoteBranchHead(ctx, src)
	}
	r, err := repo.Open(src.dir)
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	h := &branchHead{repo: r, resolve: func(ctx context.Context, _ bool) (string, error) {
		for _, rev := range []string{src.branch, "origin/" + src.branch} {
			if sha, err := r.Resolve(ctx, rev); err == nil {
				return sha, nil
			}
		}
		return "", fmt.Errorf("no status branch %s (nor origin/%s) in %s: has regatta run and pushed status yet? (git fetch origin %s)",
			src.branch, src.branch, src.dir, src.branch)
	}}
	if _, err := h.resolve(ctx, false); err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	return h, nil
}

func remoteBranchHead(ctx context.Context, src uiSource) (*branchHead, error) {
	auth, err := src.git.auth()
	if err != nil {
		return nil, err
	}
	s, err := repo.NewSource(repo.Options{URL: src.repoURL, Branch: src.branch, Auth: auth})
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	var mu sync.Mutex
	var synced string
	h := &branchHead{repo: s.Repository, resolve: func(ctx context.Context, fetch bool) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if fetch {
			rev, _, err := s.Sync(ctx)
			if err != nil {
				return "", fmt.Errorf("read status branch %s: %w", src.branch, err)
			}
			synced = rev
		}
		if synced == "" {
			return "", fmt.Errorf("status branch %s not read yet", src.branch)
		}
		return synced, nil
	}}
	if _, err := h.resolve(ctx, true); err != nil && !src.pending {
		return nil, err
	}
	return h, nil
}

func (h *branchHead) Head(ctx context.Context) (ui.Frame, error) {
	sha, err := h.resolve(ctx, false)
	if err != nil {
		return ui.Frame{}, err
	}
	return h.frame(ctx, sha)
}

// frame reads the status files of a commit; the newest is kept.
func (h *branchHead) frame(ctx context.Context, sha string) (ui.Frame, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last.Commit == sha {
		return h.last, nil
	}
	c, err := h.repo.Commit(ctx, sha)
	if err != nil {
		return ui.Frame{}, err
	}
	tree, err := h.repo.Tree(ctx, sha)
	if err != nil {
		return ui.Frame{}, err
	}
	snap, err := status.Read(tree)
	if err != nil {
		return ui.Frame{}, fmt.Errorf("status commit %s: %w", status.ShortRevision(sha), err)
	}
	h.last = ui.Frame{Commit: sha, Time: c.Time, Snapshot: snap}
	return h.last, nil
}

func (h *branchHead) At(ctx context.Context, t time.Time) (ui.Frame, error) {
	f, err := h.Head(ctx)
	if err == nil && f.Time.After(t) {
		return ui.Frame{}, ui.ErrBeforeHistory
	}
	return f, err
}

func (h *branchHead) Frame(ctx context.Context, commit string) (ui.Frame, error) {
	f, err := h.Head(ctx)
	if err == nil && !strings.HasPrefix(f.Commit, strings.ToLower(commit)) {
		return ui.Frame{}, ui.ErrUnknownCommit
	}
	return f, err
}

func (h *branchHead) Timeline(ctx context.Context, n int) ([]ui.Entry, error) {
	f, err := h.Head(ctx)
	if err != nil || n < 1 {
		return nil, err
	}
	fl := f.Snapshot.Fleet
	return []ui.Entry{{Commit: f.Commit, Time: f.Time, SourceRevision: fl.SourceRevision, AppliedRevision: fl.AppliedRevision}}, nil
}

// follow reads (fetches) the branch every interval and calls onMove when
// its head moved, until ctx ends.
func (h *branchHead) follow(ctx context.Context, every time.Duration, onMove func(), log *slog.Logger) {
	last, _ := h.resolve(ctx, false)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sha, err := h.resolve(ctx, true)
		if err != nil {
			log.Warn("web UI: status branch not read; the next refresh tries again", "error", err)
			continue
		}
		if sha != last {
			last = sha
			onMove()
		}
	}
}
