package verify

import (
	"container/heap"
	"context"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Commits reads commit objects of the repository (repo.Source, which
// fetches history a shallow clone lacks).
type Commits interface {
	CommitObject(ctx context.Context, sha string) (*object.Commit, error)
}

// since returns the commits reachable from rev and not from base, newest
// first (`git rev-list base..rev`): a walk by committer time that paints
// base's ancestors uninteresting and stops once only they are left. A
// commit of base's history dated after rev's side (clock skew) may be
// returned too: it is checked, never skipped. A missing commit of base's
// side ends that side (a shallow or compacted clone).
func since(ctx context.Context, repo Commits, rev, base string) ([]*object.Commit, error) {
	w := &walk{ctx: ctx, repo: repo, flags: map[plumbing.Hash]uint8{}}
	if err := w.push(plumbing.NewHash(rev), false); err != nil {
		return nil, err
	}
	if base != "" {
		_ = w.push(plumbing.NewHash(base), true)
	}
	var out []*object.Commit
	for w.q.Len() > 0 && w.interesting > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := heap.Pop(&w.q).(*object.Commit)
		bad := w.flags[c.Hash]&flagBase != 0
		if !bad {
			w.interesting--
			out = append(out, c)
		}
		for _, p := range c.ParentHashes {
			if err := w.push(p, bad); err != nil {
				return nil, err
			}
		}
	}
	kept := out[:0]
	for _, c := range out {
		if w.flags[c.Hash]&flagBase == 0 {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

const (
	flagSeen uint8 = 1 << iota
	flagBase
)

type walk struct {
	ctx         context.Context
	repo        Commits
	flags       map[plumbing.Hash]uint8
	q           commitQueue
	interesting int // queued commits not of base's side
}

// push queues a commit (once per side): a base-side commit marks one
// queued or returned on rev's side as base's too.
func (w *walk) push(h plumbing.Hash, base bool) error {
	f := w.flags[h]
	if f&flagSeen != 0 && (!base || f&flagBase != 0) {
		return nil
	}
	c, err := w.repo.CommitObject(w.ctx, h.String())
	if err != nil {
		if base {
			return nil // beyond a shallow boundary
		}
		return err
	}
	if f&flagSeen != 0 && w.queued(h) {
		w.flags[h] = f | flagBase
		w.interesting--
		return nil
	}
	if base {
		w.flags[h] = flagSeen | flagBase
	} else {
		w.flags[h] = flagSeen
		w.interesting++
	}
	heap.Push(&w.q, c)
	return nil
}

// queued reports whether h waits in the queue.
func (w *walk) queued(h plumbing.Hash) bool {
	for _, c := range w.q {
		if c.Hash == h {
			return true
		}
	}
	return false
}

// commitQueue is a max-heap by committer time.
type commitQueue []*object.Commit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	return q[i].Committer.When.After(q[j].Committer.When)
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*object.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}
