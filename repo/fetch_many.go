package repo

import (
	"context"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// FetchBranches lists the remote once and brings each named branch that
// exists up to date locally, fetching only those whose tip is not stored
// yet. It returns the revision of each branch found; a missing branch is
// absent from the map. Many small branches (the status refs of pull-mode
// agents) cost one listing, not one each.
func (s *Source) FetchBranches(ctx context.Context, branches []string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.compactIfGrown()
	refs, err := s.listRemote(ctx)
	if err != nil {
		return nil, err
	}
	want := make(map[string]string, len(branches))
	for _, b := range branches {
		want[branchRef(b).String()] = b
	}
	out := map[string]string{}
	for _, r := range refs {
		b, ok := want[r.Name().String()]
		if !ok {
			continue
		}
		if !s.hasCommit(r.Hash()) {
			if err := s.fetch(ctx, b); err != nil {
				return out, err
			}
		}
		h, _, err := s.pinBranch(b, r.Hash())
		if err != nil {
			return out, err
		}
		out[b] = h.String()
	}
	return out, nil
}

// listRemote lists the remote's refs. Callers hold s.mu.
func (s *Source) listRemote(ctx context.Context) ([]*plumbing.Reference, error) {
	refs, err := s.remote.ListContext(ctx, &git.ListOptions{
		Auth:            s.auth,
		CABundle:        s.opts.Auth.CABundle,
		InsecureSkipTLS: s.opts.Auth.InsecureSkipTLS,
		PeelingOption:   git.IgnorePeeled,
	})
	if err != nil {
		return nil, s.wrap("list", err)
	}
	return refs, nil
}
