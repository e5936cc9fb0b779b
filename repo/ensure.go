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
// that history (rewritten or never there).
func (s *Source) EnsureCommit(ctx context.Context, rev string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := plumbing.NewHash(rev)
	if s.hasCommit(h) {
		return nil
	}
	if err := s.fetchDepth(ctx, s.opts.branch(), unshallow); err != nil {
		return s.wrap("fetch", err)
	}
	if !s.hasCommit(h) {
		return fmt.Errorf("commit %s is not in the history of branch %q of %s", rev, s.opts.branch(), s.ep.display)
	}
	return nil
}
