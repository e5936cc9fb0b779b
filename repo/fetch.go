package repo

import (
	"context"
	"errors"
	"fmt"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
)

// Sync brings the followed branch up to date and returns its revision and
// whether it changed since the last Sync. It first lists the remote refs
// (one small request, like git ls-remote) and fetches only when the branch
// moved, so a Sync that finds nothing new costs almost nothing. A rewritten
// (force-pushed) branch is followed. On error the last good revision stays
// in force and is returned along with the error.
func (s *Source) Sync(ctx context.Context) (rev string, changed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.compactIfGrown()
	prev := s.Revision()
	h, found, err := s.syncBranch(ctx, s.opts.branch(), prev)
	if err == nil && !found {
		err = &Error{Op: fmt.Sprintf("fetch branch %q from", s.opts.branch()), URL: s.ep.display, Kind: ErrBranchNotFound}
	}
	if err != nil {
		return prev, false, err
	}
	s.setRevision(h.String())
	if h.String() != prev {
		s.log.Info("new revision", "url", s.ep.display, "branch", s.opts.branch(), "revision", h.String(), "previous", prev)
	}
	return h.String(), h.String() != prev, nil
}

// FetchBranch brings any branch of the remote (a status branch, say) into
// storage and returns its revision, or found=false when the remote has no
// such branch. Read it with Tree or Commit.
func (s *Source) FetchBranch(ctx context.Context, branch string) (rev string, found bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.compactIfGrown()
	h, found, err := s.syncBranch(ctx, branch, "")
	if err != nil || !found {
		return "", found, err
	}
	return h.String(), true, nil
}

// syncBranch lists the remote branch and fetches it unless known is its
// revision and the commit is stored. Callers hold s.mu.
func (s *Source) syncBranch(ctx context.Context, branch, known string) (plumbing.Hash, bool, error) {
	want, found, err := s.remoteRef(ctx, branch)
	if err != nil || !found {
		return plumbing.ZeroHash, found, err
	}
	if want.String() == known && s.hasCommit(want) {
		s.log.Debug("remote unchanged, no fetch", "url", s.ep.display, "branch", branch)
		return want, true, nil
	}
	if !s.hasCommit(want) {
		if err := s.fetch(ctx, branch); err != nil {
			return plumbing.ZeroHash, true, err
		}
	}
	return s.pinBranch(branch, want)
}

// pinBranch points refs/heads/<branch> at want, or at what a fetch stored
// if the branch moved again between listing and fetching.
func (s *Source) pinBranch(branch string, want plumbing.Hash) (plumbing.Hash, bool, error) {
	if !s.hasCommit(want) {
		ref, err := s.store.Reference(branchRef(branch))
		if err != nil {
			return plumbing.ZeroHash, true, s.wrap("fetch", err)
		}
		want = ref.Hash()
	}
	if err := s.store.SetReference(plumbing.NewHashReference(branchRef(branch), want)); err != nil {
		return plumbing.ZeroHash, true, s.wrap("fetch", err)
	}
	return want, true, nil
}

// remoteRef lists the remote's refs and returns the branch's revision.
func (s *Source) remoteRef(ctx context.Context, branch string) (plumbing.Hash, bool, error) {
	refs, err := s.listRemote(ctx)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	name := branchRef(branch)
	for _, r := range refs {
		if r.Name() == name {
			return r.Hash(), true, nil
		}
	}
	return plumbing.ZeroHash, false, nil
}

// fetch fetches one branch, shallow unless FullHistory; if a shallow fetch
// fails for another reason than the transport, it retries with the full
// history, which go-git supports in every case.
func (s *Source) fetch(ctx context.Context, branch string) error {
	depth := 1
	if s.opts.FullHistory {
		depth = 0
	}
	err := s.fetchDepth(ctx, branch, depth)
	if err != nil && depth > 0 && !isTransportError(err) && ctx.Err() == nil {
		s.log.Warn("shallow fetch failed, fetching full history", "url", s.ep.display, "error", s.wrap("fetch", err))
		err = s.fetchDepth(ctx, branch, 0)
	}
	if err != nil {
		return s.wrap("fetch", err)
	}
	return nil
}

func (s *Source) fetchDepth(ctx context.Context, branch string, depth int) error {
	spec := config.RefSpec(fmt.Sprintf("+%s:%s", branchRef(branch), branchRef(branch)))
	err := s.remote.FetchContext(ctx, &git.FetchOptions{
		RemoteName:      remoteName,
		RefSpecs:        []config.RefSpec{spec},
		Depth:           depth,
		Auth:            s.auth,
		Tags:            git.NoTags,
		Force:           true,
		CABundle:        s.opts.Auth.CABundle,
		InsecureSkipTLS: s.opts.Auth.InsecureSkipTLS,
	})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}

func (s *Source) hasCommit(h plumbing.Hash) bool {
	_, err := s.store.EncodedObject(plumbing.CommitObject, h)
	return err == nil
}

// isTransportError reports errors a retry with other options cannot fix.
func isTransportError(err error) bool {
	return classify(err) != nil || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) || isNetError(err)
}
