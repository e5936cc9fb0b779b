package repo

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// AnyVersion reports whether some commit reachable from rev holds the file
// at path with a content for which match is true. The history a shallow
// clone lacks is fetched first (the followed branch's whole history, once).
func (s *Source) AnyVersion(ctx context.Context, rev, path string, match func([]byte) bool) (bool, error) {
	return s.walkHistory(ctx, func() (bool, error) { return s.anyVersion(ctx, rev, path, match) })
}

// walkHistory runs walk, and again after fetching the followed branch's
// whole history when walk reached the boundary of a shallow clone.
func (s *Source) walkHistory(ctx context.Context, walk func() (bool, error)) (bool, error) {
	found, err := walk()
	if !errors.Is(err, plumbing.ErrObjectNotFound) {
		return found, err
	}
	s.mu.Lock()
	err = s.fetchDepth(ctx, s.opts.branch(), unshallow)
	s.mu.Unlock()
	if err != nil {
		return false, s.wrap("fetch", err)
	}
	return walk()
}

func (r *Repository) anyVersion(ctx context.Context, rev, path string, match func([]byte) bool) (bool, error) {
	c, err := r.commit(ctx, rev)
	if err != nil {
		return false, err
	}
	seen := map[plumbing.Hash]bool{}
	found := false
	err = object.NewCommitPreorderIter(c, nil, nil).ForEach(func(c *object.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := c.File(path)
		switch {
		case errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound):
			return nil
		case err != nil:
			return err
		case seen[f.Hash]:
			return nil
		}
		seen[f.Hash] = true
		b, err := f.Contents()
		if err != nil {
			return err
		}
		if match([]byte(b)) {
			found = true
			return storer.ErrStop
		}
		return nil
	})
	return found, err
}

// Descends reports whether base is reachable from rev: rev is base or a
// commit made after it on top of it. rev is fetched with the followed
// branch's whole history when missing; a rev that is not in that history
// (rewritten, or never pushed there) fails with ErrRevisionNotFound.
func (s *Source) Descends(ctx context.Context, rev, base string) (bool, error) {
	if rev == base {
		return true, nil
	}
	if err := s.EnsureCommit(ctx, rev); err != nil {
		return false, err
	}
	return s.walkHistory(ctx, func() (bool, error) { return s.descends(ctx, rev, base) })
}

func (r *Repository) descends(ctx context.Context, rev, base string) (bool, error) {
	c, err := r.commit(ctx, rev)
	if err != nil {
		return false, err
	}
	want := plumbing.NewHash(base)
	found := false
	err = object.NewCommitPreorderIter(c, nil, nil).ForEach(func(c *object.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.Hash == want {
			found = true
			return storer.ErrStop
		}
		return nil
	})
	return found, err
}
