package repo

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// maxSymlinkHops bounds symlink resolution, as the kernel's ELOOP does.
const maxSymlinkHops = 40

var (
	errTooManyLinks = errors.New("too many levels of symbolic links")
	errIsDir        = errors.New("is a directory")
	errNotDir       = errors.New("not a directory")
	errNotSymlink   = errors.New("not a symbolic link")
)

// Tree is the tree of one commit as a read-only file system. It implements
// fs.ReadDirFS, fs.ReadFileFS, fs.StatFS and fs.ReadLinkFS. Open, ReadFile,
// Stat and ReadDir follow symlinks that stay inside the tree and fail with
// ErrSymlinkEscape for one that leaves it; Lstat reports a symlink as
// fs.ModeSymlink and ReadLink returns its target unchanged. Files are
// read from the object store, never from a working tree, so trees of
// several revisions can be used side by side and from many goroutines.
type Tree struct {
	store    storer.EncodedObjectStorer
	revision string
	root     plumbing.Hash
	modTime  time.Time
	dirs     sync.Map // plumbing.Hash -> []object.TreeEntry
}

var (
	_ fs.ReadDirFS  = (*Tree)(nil)
	_ fs.ReadFileFS = (*Tree)(nil)
	_ fs.StatFS     = (*Tree)(nil)
	_ fs.ReadLinkFS = (*Tree)(nil)
)

func newTree(st storer.EncodedObjectStorer, rev string, root plumbing.Hash, mod time.Time) *Tree {
	return &Tree{store: st, revision: rev, root: root, modTime: mod}
}

// Revision is the commit SHA the tree belongs to.
func (t *Tree) Revision() string { return t.revision }

// Hash is the Git hash of the root tree.
func (t *Tree) Hash() string { return t.root.String() }

// node is a resolved tree entry.
type node struct {
	name string
	mode filemode.FileMode
	hash plumbing.Hash
}

func (t *Tree) rootNode() node {
	return node{name: ".", mode: filemode.Dir, hash: t.root}
}

// TreeHash returns the Git hash of the folder or file at name (symlinks
// followed): equal hashes mean equal content, so a render cache can key on
// it. "." is the root tree.
func (t *Tree) TreeHash(name string) (string, error) {
	n, err := t.resolve("treehash", name, true)
	if err != nil {
		return "", err
	}
	return n.hash.String(), nil
}

// resolve finds name, following symlinks in every element but the last
// unless followLast.
func (t *Tree) resolve(op, name string, followLast bool) (node, error) {
	if !fs.ValidPath(name) {
		return node{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n, err := t.walk(splitPath(name), followLast)
	if err != nil {
		return node{}, &fs.PathError{Op: op, Path: name, Err: err}
	}
	n.name = path.Base(name)
	return n, nil
}

func (t *Tree) walk(parts []string, followLast bool) (node, error) {
	cur, dir := t.rootNode(), []string(nil)
	for hops := 0; len(parts) > 0; {
		if cur.mode != filemode.Dir {
			return node{}, fs.ErrNotExist
		}
		next, err := t.lookup(cur.hash, parts[0])
		if err != nil {
			return node{}, err
		}
		parts = parts[1:]
		if next.mode != filemode.Symlink || (len(parts) == 0 && !followLast) {
			cur, dir = next, append(dir, next.name)
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return node{}, errTooManyLinks
		}
		target, err := t.readBlob(next.hash)
		if err != nil {
			return node{}, err
		}
		if parts, err = joinLink(dir, string(target), parts); err != nil {
			return node{}, err
		}
		cur, dir = t.rootNode(), nil
	}
	return cur, nil
}

// joinLink replaces a symlink found in dir by its target, refusing targets
// that leave the tree.
func joinLink(dir []string, target string, rest []string) ([]string, error) {
	if path.IsAbs(target) {
		return nil, ErrSymlinkEscape
	}
	p := path.Join(path.Join(dir...), target)
	if p == ".." || strings.HasPrefix(p, "../") {
		return nil, ErrSymlinkEscape
	}
	return append(splitPath(p), rest...), nil
}

func splitPath(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func (t *Tree) lookup(dir plumbing.Hash, name string) (node, error) {
	entries, err := t.entries(dir)
	if err != nil {
		return node{}, err
	}
	for _, e := range entries {
		if e.Name == name {
			return node{name: e.Name, mode: e.Mode, hash: e.Hash}, nil
		}
	}
	return node{}, fs.ErrNotExist
}

// entries decodes a tree object once per Tree. The decoded *object.Tree is
// not shared: its lookup map is built lazily and is not goroutine-safe.
func (t *Tree) entries(h plumbing.Hash) ([]object.TreeEntry, error) {
	if v, ok := t.dirs.Load(h); ok {
		return v.([]object.TreeEntry), nil
	}
	tree, err := object.GetTree(t.store, h)
	if err != nil {
		return nil, err
	}
	t.dirs.Store(h, tree.Entries)
	return tree.Entries, nil
}

func (t *Tree) readBlob(h plumbing.Hash) ([]byte, error) {
	obj, err := t.store.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, err
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
