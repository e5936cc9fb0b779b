package repo

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// unshallow is the depth `git fetch --unshallow` asks for: all of it.
const unshallow = 1<<31 - 1

// EnsureCommit makes an older commit of the followed branch readable with
// Tree: a shallow clone holds only the branch head, so when rev is missing
// the branch's whole history is fetched once. It fails when rev is not in
// that history (rewritten or never there), with ErrRevisionNotFound.
func (s *Source) EnsureCommit(ctx context.Context, rev string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := plumbing.NewHash(rev)
	if s.hasCommit(h) {
		s.pin(h)
		return nil
	}
	if err := s.fetchDepth(ctx, s.opts.branch(), unshallow); err != nil {
		return s.wrap("fetch", err)
	}
	if !s.hasCommit(h) {
		return &Error{Op: fmt.Sprintf("find commit %s in the history of branch %q of", rev, s.opts.branch()), URL: s.ep.display, Kind: ErrRevisionNotFound}
	}
	s.pin(h)
	return nil
}
