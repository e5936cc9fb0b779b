// Package history bounds the history of a status branch: every status
// commit stays in the fleet repository, which every `git clone` fetches
// whole by default, so a busy fleet would add gigabytes a year. A
// Retention keeps the last Keep commits of the branch and folds the older
// history into the oldest kept commit (repo.Source.FoldHistory), checking
// at the first status commit a process makes and then after every Keep
// more: the branch holds between Keep and about twice Keep commits.
//
// The daemon calls Committed after each status commit it pushed, on the
// branch it wrote: the central daemon folds the status branch, an agent
// its own ref (regatta-status/<cluster>), each by the same rule. No
// process folds a branch another process writes alone; a fold pushed
// while another writer committed is refused by the Git server and tried
// again at the next check.
package history

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/regatta-dev/regatta/repo"
)

// Folder folds a branch's history (repo.Source does).
type Folder interface {
	FoldHistory(ctx context.Context, branch string, keep int) (repo.FoldResult, error)
}

// Retention folds a status branch's history after every Keep status
// commits. It is not safe for concurrent use: the daemon calls it under
// its status commit lock.
type Retention struct {
	// Keep is the number of commits kept; 0 keeps the whole history.
	Keep   int
	Source Folder
	Log    *slog.Logger
	// since counts the status commits since the last check; started is
	// false until the first check.
	since   int
	started bool
}

// New is a Retention keeping keep commits of the branches src writes.
func New(src Folder, keep int, log *slog.Logger) *Retention {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Retention{Keep: keep, Source: src, Log: log}
}

// Due reports whether the next Committed checks the branch.
func (r *Retention) Due() bool {
	return r.Keep > 0 && (!r.started || r.since+1 >= r.Keep)
}

// Committed is called after each status commit pushed to branch. When a
// check is due it folds the branch's history beyond Keep commits; a fold
// that lost a race waits for the next check. Errors are the fold's; the
// status commit itself stands either way.
func (r *Retention) Committed(ctx context.Context, branch string) (repo.FoldResult, error) {
	if !r.Due() {
		if r.Keep > 0 {
			r.since++
		}
		return repo.FoldResult{}, nil
	}
	r.started, r.since = true, 0
	res, err := r.Source.FoldHistory(ctx, branch, r.Keep)
	switch {
	case err != nil:
		return res, fmt.Errorf("status history of %s (--status-history-keep %d): %w", branch, r.Keep, err)
	case res.Folded:
		r.Log.Info("status history folded", "branch", branch, "kept", res.Kept, "from", short(res.Old), "to", short(res.New))
	case res.Raced:
		r.Log.Info("status history fold lost a race with another writer; next check", "branch", branch)
	}
	return res, nil
}

func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}
