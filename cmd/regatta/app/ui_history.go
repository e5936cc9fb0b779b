package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/regatta-dev/regatta/ui"
	"github.com/regatta-dev/regatta/ui/timeline"
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

// newUIHistory is the History the web UI reads (ui/timeline: the status
// branch's commits, with the clusters' arrivals) and the loop that follows
// the branch, calling onMove when its head moves, until ctx ends.
func newUIHistory(ctx context.Context, src uiSource, log *slog.Logger) (ui.History, func(context.Context, time.Duration, func()), error) {
	r, err := openTimeline(src, log)
	if err != nil {
		return nil, nil, err
	}
	if !src.pending {
		if _, err := r.Head(ctx); errors.Is(err, timeline.ErrNoBranch) {
			return nil, nil, &ExitError{Code: ExitUsage, Err: err}
		}
	}
	return r, r.Run, nil
}

func openTimeline(src uiSource, log *slog.Logger) (*timeline.Reader, error) {
	if src.repoURL == "" {
		r, err := timeline.Local(src.dir, src.branch, timeline.Options{Log: log})
		if err != nil {
			return nil, &ExitError{Code: ExitUsage, Err: err}
		}
		return r, nil
	}
	auth, err := src.git.auth()
	if err != nil {
		return nil, err
	}
	r, err := timeline.Open(src.repoURL, src.branch, timeline.Options{Auth: auth, Log: log})
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	return r, nil
}
