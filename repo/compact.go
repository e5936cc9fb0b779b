package repo

import (
	"sync"
	"weak"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Compaction of an in-memory clone
//
// A Source without Dir keeps its clone in go-git's memory storage, which
// never forgets an object: every fetched revision and every status commit
// (a new status/clusters tree, one entry per cluster, and the records that
// changed) stays for the life of the process. A daemon that runs for
// weeks over a large fleet would grow by nearly 1 MiB per fleet-wide
// status commit of 1,000 clusters, without bound.
//
// compactIfGrown rebuilds the object store, once it holds twice what the
// last compaction kept, with what can still be read: the commits that
// references point to (branch tips, the revision followed, status
// branches), the commits of Trees handed out and still in use (weak
// pointers: a Tree someone holds keeps its objects), and the commits
// EnsureCommit found since the last compaction, each with its whole tree.
// History beyond them is cut, as a depth-1 fetch cuts it (the cut commits
// become the shallow boundary); walkHistory and EnsureCommit fetch it
// again when they need it. A Source with FullHistory keeps everything. A
// clone on disk is compacted the same way (compact_disk.go).

// minCompactObjects is the fewest objects a compaction runs at: below it
// the store is small whatever it holds.
const minCompactObjects = 4096

// liveTrees tracks the commits whose trees are in use. Its mutex also
// orders Tree against compaction: a Tree is either registered before a
// compaction, so kept, or read after it from what the compaction kept.
type liveTrees struct {
	mu    sync.Mutex
	trees map[plumbing.Hash][]weak.Pointer[Tree]
	// pinned are commits EnsureCommit found since the last compaction:
	// its caller reads the tree next.
	pinned map[plumbing.Hash]bool
	// kept is how many objects the last compaction kept; swept how many
	// commits the last sweep left.
	kept, swept int
}

func newLiveTrees() *liveTrees {
	return &liveTrees{trees: map[plumbing.Hash][]weak.Pointer[Tree]{}, pinned: map[plumbing.Hash]bool{}}
}

// add records t, the tree of commit; l.mu is held. Trees nobody holds
// are forgotten as it goes, so that a Source asked for trees all day
// without a compaction does not grow.
func (l *liveTrees) add(commit plumbing.Hash, t *Tree) {
	l.trees[commit] = append(alive(l.trees[commit]), weak.Make(t))
	if len(l.trees) > 2*l.swept+64 {
		l.sweep()
	}
}

// sweep forgets the commits whose trees nobody holds; l.mu is held.
func (l *liveTrees) sweep() {
	for c, ptrs := range l.trees {
		if ptrs = alive(ptrs); len(ptrs) == 0 {
			delete(l.trees, c)
		} else {
			l.trees[c] = ptrs
		}
	}
	l.swept = len(l.trees)
}

// alive keeps the pointers to trees still held.
func alive(ptrs []weak.Pointer[Tree]) []weak.Pointer[Tree] {
	out := ptrs[:0]
	for _, p := range ptrs {
		if p.Value() != nil {
			out = append(out, p)
		}
	}
	return out
}

// pin keeps commit through the next compaction.
func (l *liveTrees) pin(commit plumbing.Hash) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pinned[commit] = true
}

// roots returns the commits in use and forgets the pins; l.mu is held.
func (l *liveTrees) roots() []plumbing.Hash {
	l.sweep()
	out := make([]plumbing.Hash, 0, len(l.trees)+len(l.pinned))
	for c := range l.trees {
		out = append(out, c)
	}
	for c := range l.pinned {
		out = append(out, c)
	}
	clear(l.pinned)
	return out
}

// pin keeps commit through the next compaction.
func (s *Source) pin(commit plumbing.Hash) {
	s.live.pin(commit)
}

// compactIfGrown compacts the store when it has grown: in memory to twice
// what the last compaction kept, on disk as compactDiskIfGrown says.
// Callers hold s.mu, so no fetch or commit writes meanwhile.
func (s *Source) compactIfGrown() {
	if s.opts.FullHistory {
		return
	}
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	if s.disk != nil {
		s.compactDiskIfGrown()
		return
	}
	unlock := s.locked.rlock()
	n := len(s.mem.Objects)
	unlock()
	if n < minCompactObjects || n < 2*s.live.kept {
		return
	}
	roots := s.live.roots()
	defer s.locked.wlock()()
	roots = append(roots, refTips(s.mem)...)
	s.live.kept = keepReachable(s.mem, roots)
	s.log.Debug("compacted the in-memory clone", "url", s.ep.display, "objects", n, "kept", s.live.kept)
}

// refTips lists the commits (or tags) the references of st point to; st
// is locked.
func refTips(st storer.ReferenceStorer) []plumbing.Hash {
	var out []plumbing.Hash
	refs, err := st.IterReferences()
	if err != nil {
		return nil
	}
	_ = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference {
			out = append(out, ref.Hash())
		}
		return nil
	})
	return out
}

// keepReachable replaces mem's objects with those of roots (commits, their
// trees and blobs; annotated tags and their targets), the history behind
// them cut, and returns how many it kept. mem is locked for writing.
func keepReachable(mem *memory.Storage, roots []plumbing.Hash) int {
	k := reachable(&mem.ObjectStorage, roots)
	to := memory.ObjectStorage{
		Objects: map[plumbing.Hash]plumbing.EncodedObject{}, Commits: map[plumbing.Hash]plumbing.EncodedObject{},
		Trees: map[plumbing.Hash]plumbing.EncodedObject{}, Blobs: map[plumbing.Hash]plumbing.EncodedObject{},
		Tags: map[plumbing.Hash]plumbing.EncodedObject{},
	}
	for h := range k.kept {
		if o, ok := mem.Objects[h]; ok {
			_, _ = to.SetEncodedObject(o)
		}
	}
	mem.ObjectStorage = to
	_ = mem.SetShallow(k.boundary())
	return len(to.Objects)
}

// keeper finds the objects reachable from some roots.
type keeper struct {
	from storer.EncodedObjectStorer
	kept map[plumbing.Hash]bool
	// parents of the kept commits.
	parents map[plumbing.Hash][]plumbing.Hash
}

// reachable walks from roots: commits, their trees and blobs (not their
// parents), annotated tags and their targets. An object from does not
// hold (beyond a shallow boundary already) is skipped; a blob is listed
// without being read.
func reachable(from storer.EncodedObjectStorer, roots []plumbing.Hash) *keeper {
	k := &keeper{from: from, kept: map[plumbing.Hash]bool{}, parents: map[plumbing.Hash][]plumbing.Hash{}}
	for _, h := range roots {
		k.object(h)
	}
	return k
}

// boundary lists the kept commits with a parent that is not kept: the
// shallow boundary, as a fetch of limited depth records it.
func (k *keeper) boundary() []plumbing.Hash {
	var out []plumbing.Hash
	for c, ps := range k.parents {
		for _, p := range ps {
			if !k.kept[p] {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// object keeps the object h and what it needs.
func (k *keeper) object(h plumbing.Hash) {
	if k.kept[h] {
		return
	}
	o, err := k.from.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return
	}
	k.kept[h] = true
	switch o.Type() {
	case plumbing.CommitObject:
		k.commit(o)
	case plumbing.TreeObject:
		k.tree(o)
	case plumbing.TagObject:
		if t, err := object.DecodeTag(k.from, o); err == nil {
			k.object(t.Target)
		}
	}
}

// commit keeps a commit's tree; its parents are kept only as roots of
// their own (boundary tells).
func (k *keeper) commit(o plumbing.EncodedObject) {
	c, err := object.DecodeCommit(k.from, o)
	if err != nil {
		return
	}
	k.object(c.TreeHash)
	if len(c.ParentHashes) > 0 {
		k.parents[c.Hash] = c.ParentHashes
	}
}

// tree keeps a tree's entries (a submodule's commit is not in this
// repository); blobs are listed without reading them.
func (k *keeper) tree(o plumbing.EncodedObject) {
	t, err := object.DecodeTree(k.from, o)
	if err != nil {
		return
	}
	for _, e := range t.Entries {
		switch e.Mode {
		case filemode.Submodule:
		case filemode.Dir:
			k.object(e.Hash)
		default:
			k.kept[e.Hash] = true
		}
	}
}
