package repo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// History of a branch, read commit by commit: the web UI's timeline of the
// status branch (ui/timeline) lists its commits and decodes only the files
// each one changed.

// FirstParents lists the commits from rev down its first parents, newest
// first. The walk stops before the commit until (when not empty), after n
// commits (when n > 0), or at the oldest commit stored: a root commit (the
// first of a branch, or the commit a fold of its history left) or one
// whose parent this storage lacks (the boundary of a shallow clone; a
// Source made with Options.FullHistory has none).
func (r *Repository) FirstParents(ctx context.Context, rev, until string, n int) ([]Commit, error) {
	c, err := r.commit(ctx, rev)
	if err != nil {
		return nil, err
	}
	stop := plumbing.NewHash(until)
	var out []Commit
	for {
		out = append(out, newCommit(c))
		if (n > 0 && len(out) == n) || len(c.ParentHashes) == 0 || (until != "" && c.ParentHashes[0] == stop) {
			return out, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		parent, err := object.GetCommit(r.store, c.ParentHashes[0])
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, &Error{Op: fmt.Sprintf("read commit %s in", c.ParentHashes[0]), URL: r.display, Err: err}
		}
		c = parent
	}
}

// FileChange is a file whose content differs between two commits.
type FileChange struct {
	// Path is the file's path from the repository root.
	Path string
	// Old and New are the file's Git hashes in the older and the newer
	// commit, "" where it is absent. Read them with Blob.
	Old, New string
}

// ChangedFiles lists the files under dir ("" or "." for the whole tree)
// that differ between the trees of two commits, sorted by path; an empty
// older compares newer with an empty tree, so every file is listed as
// added. Folders whose hashes are equal are not opened: the cost follows
// the change, not the size of the tree.
func (r *Repository) ChangedFiles(ctx context.Context, older, newer, dir string) ([]FileChange, error) {
	dir = path.Clean(dir)
	a, err := r.dirHash(ctx, older, dir)
	if err != nil {
		return nil, err
	}
	b, err := r.dirHash(ctx, newer, dir)
	if err != nil {
		return nil, err
	}
	var out []FileChange
	if err := r.diffTrees(ctx, dir, a, b, &out); err != nil {
		return nil, &Error{Op: fmt.Sprintf("compare %s and %s in", older, newer), URL: r.display, Err: err}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// dirHash is the hash of the folder dir in the tree of rev: the zero hash
// for an empty rev or a commit without that folder.
func (r *Repository) dirHash(ctx context.Context, rev, dir string) (plumbing.Hash, error) {
	if rev == "" {
		return plumbing.ZeroHash, nil
	}
	c, err := r.commit(ctx, rev)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h := c.TreeHash
	for _, name := range splitPath(dir) {
		entries, err := treeEntries(r.store, h)
		if err != nil {
			return plumbing.ZeroHash, &Error{Op: fmt.Sprintf("read %s at %s in", dir, rev), URL: r.display, Err: err}
		}
		e, ok := entries[name]
		if !ok || e.Mode != filemode.Dir {
			return plumbing.ZeroHash, nil
		}
		h = e.Hash
	}
	return h, nil
}

// diffTrees appends to out the files that differ between the trees a and
// b (zero: empty) of the folder dir. Both list their entries in Git's
// order, so they are walked side by side.
func (r *Repository) diffTrees(ctx context.Context, dir string, a, b plumbing.Hash, out *[]FileChange) error {
	if a == b {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ea, err := sortedEntries(r.store, a)
	if err != nil {
		return err
	}
	eb, err := sortedEntries(r.store, b)
	if err != nil {
		return err
	}
	for i, j := 0, 0; i < len(ea) || j < len(eb); {
		var x, y object.TreeEntry
		switch c := compareEntries(ea, eb, i, j); {
		case c < 0:
			x, i = ea[i], i+1
		case c > 0:
			y, j = eb[j], j+1
		default:
			x, y, i, j = ea[i], eb[j], i+1, j+1
		}
		if x == y {
			continue
		}
		name := x.Name
		if name == "" {
			name = y.Name
		}
		if err := r.diffEntry(ctx, path.Join(dir, name), x, y, out); err != nil {
			return err
		}
	}
	return nil
}

// diffEntry compares one entry of two trees (a zero entry is absent): two
// folders are compared inside, a folder against a file is its files
// removed or added.
func (r *Repository) diffEntry(ctx context.Context, p string, x, y object.TreeEntry, out *[]FileChange) error {
	if x == y {
		return nil
	}
	xDir, yDir := x.Mode == filemode.Dir, y.Mode == filemode.Dir
	switch {
	case xDir && yDir:
		return r.diffTrees(ctx, p, x.Hash, y.Hash, out)
	case xDir:
		if err := r.diffTrees(ctx, p, x.Hash, plumbing.ZeroHash, out); err != nil {
			return err
		}
		x = object.TreeEntry{}
	case yDir:
		if err := r.diffTrees(ctx, p, plumbing.ZeroHash, y.Hash, out); err != nil {
			return err
		}
		y = object.TreeEntry{}
	}
	if x.Hash != y.Hash {
		*out = append(*out, FileChange{Path: p, Old: hashString(x.Hash), New: hashString(y.Hash)})
	}
	return nil
}

// sortedEntries are the entries of the tree h (zero: none), in Git's
// order.
func sortedEntries(st storer.EncodedObjectStorer, h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	t, err := object.GetTree(st, h)
	if err != nil {
		return nil, err
	}
	return t.Entries, nil
}

// compareEntries orders ea[i] and eb[j] as Git orders a tree's entries
// (a folder's name as if it ended in "/"); an index past its end comes
// last.
func compareEntries(ea, eb []object.TreeEntry, i, j int) int {
	switch {
	case i >= len(ea):
		return 1
	case j >= len(eb):
		return -1
	}
	return strings.Compare(gitName(ea[i]), gitName(eb[j]))
}

func gitName(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

func hashString(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// Blob reads the content of a file by its Git hash (FileChange.Old, New).
func (r *Repository) Blob(ctx context.Context, hash string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	obj, err := r.store.EncodedObject(plumbing.BlobObject, plumbing.NewHash(hash))
	if err != nil {
		return nil, &Error{Op: fmt.Sprintf("read file %s in", hash), URL: r.display, Err: err}
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, &Error{Op: fmt.Sprintf("read file %s in", hash), URL: r.display, Err: err}
	}
	defer rd.Close()
	return io.ReadAll(rd)
}
