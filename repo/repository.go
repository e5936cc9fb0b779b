package repo

import (
	"context"
	"errors"
	"fmt"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
)

// Repository reads commits and trees of a Git repository without touching
// a working tree. It is safe for concurrent use, also while its Source
// fetches or commits.
type Repository struct {
	git     *git.Repository
	store   storage.Storer // locked; see lockedStorage
	display string         // redacted location, for errors
	// live records the trees handed out, for compaction (a Source's
	// in-memory clone); nil otherwise.
	live *liveTrees
}

// Open opens a local repository (a normal clone with a working tree, or a
// bare repository) for reading revisions, as `regatta plan --base --head`
// and `regatta render --revision` do. The working tree is never read.
func Open(path string) (*Repository, error) {
	ep, err := localEndpoint(path)
	if err != nil {
		return nil, err
	}
	r, err := git.PlainOpenWithOptions(ep.path, &git.PlainOpenOptions{
		DetectDotGit: true, EnableDotGitCommonDir: true,
	})
	if err != nil {
		return nil, &Error{Op: "open", URL: ep.display, Kind: ErrRepositoryNotFound, Err: err}
	}
	return newRepository(r.Storer, false, ep.display)
}

func newRepository(raw storage.Storer, shared bool, display string) (*Repository, error) {
	st := newLockedStorage(raw, shared)
	r, err := git.Open(st, nil)
	if err != nil {
		return nil, &Error{Op: "open", URL: display, Err: err}
	}
	return &Repository{git: r, store: st, display: display}, nil
}

// Resolve turns a revision into a full commit SHA: a full or short SHA, a
// branch, a tag, HEAD, or any expression go-git understands (main~1).
func (r *Repository) Resolve(ctx context.Context, rev string) (string, error) {
	c, err := r.commit(ctx, rev)
	if err != nil {
		return "", err
	}
	return c.Hash.String(), nil
}

func (r *Repository) commit(ctx context.Context, rev string) (*object.Commit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h, err := r.git.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, r.revisionError(rev, err)
	}
	c, err := object.GetCommit(r.store, *h)
	if err != nil {
		return nil, r.revisionError(rev, err)
	}
	return c, nil
}

func (r *Repository) revisionError(rev string, err error) error {
	if errors.Is(err, plumbing.ErrReferenceNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return &Error{Op: fmt.Sprintf("resolve %q in", rev), URL: r.display, Kind: ErrRevisionNotFound}
	}
	return &Error{Op: fmt.Sprintf("resolve %q in", rev), URL: r.display, Kind: ErrRevisionNotFound, Err: err}
}

// Commit describes the commit at a revision.
func (r *Repository) Commit(ctx context.Context, rev string) (Commit, error) {
	c, err := r.commit(ctx, rev)
	if err != nil {
		return Commit{}, err
	}
	return newCommit(c), nil
}

// Tree returns the tree of the commit at a revision as a file system.
func (r *Repository) Tree(ctx context.Context, rev string) (*Tree, error) {
	if r.live != nil {
		r.live.mu.Lock()
		defer r.live.mu.Unlock()
	}
	c, err := r.commit(ctx, rev)
	if err != nil {
		return nil, err
	}
	t := newTree(r.store, c.Hash.String(), c.TreeHash, c.Committer.When)
	if r.live != nil {
		r.live.add(c.Hash, t)
	}
	return t, nil
}
