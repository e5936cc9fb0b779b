package repo

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// TreesEqualExcept reports whether two revisions have the same tree apart
// from the folder except ("status"). The daemon uses it to tell a status
// commit on the followed branch from a change that needs a pass; it works
// on shallow storage, where history between the two is unknown.
func (r *Repository) TreesEqualExcept(ctx context.Context, revA, revB, except string) (bool, error) {
	a, err := r.commit(ctx, revA)
	if err != nil {
		return false, err
	}
	b, err := r.commit(ctx, revB)
	if err != nil {
		return false, err
	}
	return r.treesEqualExcept(a.TreeHash, b.TreeHash, splitPath(except))
}

func (r *Repository) treesEqualExcept(a, b plumbing.Hash, except []string) (bool, error) {
	if a == b {
		return true, nil
	}
	if len(except) == 0 {
		return false, nil
	}
	ea, err := treeEntries(r.store, a)
	if err != nil {
		return false, err
	}
	eb, err := treeEntries(r.store, b)
	if err != nil {
		return false, err
	}
	for name := range union(ea, eb) {
		x, y := ea[name], eb[name]
		switch {
		case name == except[0] && len(except) == 1:
			continue
		case name == except[0] && x.Mode == filemode.Dir && y.Mode == filemode.Dir:
			if ok, err := r.treesEqualExcept(x.Hash, y.Hash, except[1:]); !ok || err != nil {
				return ok, err
			}
		case x != y:
			return false, nil
		}
	}
	return true, nil
}

func union[V any](a, b map[string]V) map[string]struct{} {
	out := make(map[string]struct{}, len(a)+len(b))
	for k := range a {
		out[k] = struct{}{}
	}
	for k := range b {
		out[k] = struct{}{}
	}
	return out
}
