package repo

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitObject returns go-git's object of the commit at a revision, for
// signature checks (package verify): its signature, payload, parents and
// trees, all read from this repository.
func (r *Repository) CommitObject(ctx context.Context, rev string) (*object.Commit, error) {
	return r.commit(ctx, rev)
}

// CommitObject returns the commit with that SHA, fetching the followed
// branch's whole history once when a shallow clone lacks it (see
// EnsureCommit).
func (s *Source) CommitObject(ctx context.Context, sha string) (*object.Commit, error) {
	c, err := s.Repository.CommitObject(ctx, sha)
	if err == nil || !errors.Is(err, ErrRevisionNotFound) || !plumbing.IsHash(sha) {
		return c, err
	}
	if err := s.EnsureCommit(ctx, sha); err != nil {
		return nil, err
	}
	return s.Repository.CommitObject(ctx, sha)
}
