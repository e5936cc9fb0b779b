package repo

import (
	"errors"
	"io/fs"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// edit is the change at one path: write a blob, or delete (a file or a
// whole folder).
type edit struct {
	blob plumbing.Hash
	del  bool
}

// applyEdits writes the tree that results from applying edits (keyed by
// slash-separated paths relative to base) to the tree base (zero for an
// empty tree). Untouched subtrees are reused by hash. It returns the zero
// hash for an empty tree.
func applyEdits(st storer.EncodedObjectStorer, base plumbing.Hash, edits map[string]edit) (plumbing.Hash, error) {
	entries, err := treeEntries(st, base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	groups := map[string]map[string]edit{}
	for p, e := range edits {
		first, rest, nested := strings.Cut(p, "/")
		switch {
		case nested && groups[first] == nil:
			groups[first] = map[string]edit{rest: e}
		case nested:
			groups[first][rest] = e
		case e.del:
			delete(entries, first)
		default:
			entries[first] = object.TreeEntry{Name: first, Mode: filemode.Regular, Hash: e.blob}
		}
	}
	for name, sub := range groups {
		if err := applyGroup(st, entries, name, sub); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, nil
	}
	return writeTree(st, entries)
}

// applyGroup applies edits below the folder name of entries.
func applyGroup(st storer.EncodedObjectStorer, entries map[string]object.TreeEntry, name string, sub map[string]edit) error {
	var subBase plumbing.Hash
	if cur, ok := entries[name]; ok && cur.Mode == filemode.Dir {
		subBase = cur.Hash
	}
	h, err := applyEdits(st, subBase, sub)
	switch {
	case err != nil:
		return err
	case h.IsZero():
		delete(entries, name)
	default:
		entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
	}
	return nil
}

func treeEntries(st storer.EncodedObjectStorer, h plumbing.Hash) (map[string]object.TreeEntry, error) {
	entries := map[string]object.TreeEntry{}
	if h.IsZero() {
		return entries, nil
	}
	t, err := object.GetTree(st, h)
	if err != nil {
		return nil, err
	}
	for _, e := range t.Entries {
		entries[e.Name] = e
	}
	return entries, nil
}

// writeTree stores a tree with its entries in Git's order: by name, with
// folders compared as if their name ended in "/".
func writeTree(st storer.EncodedObjectStorer, entries map[string]object.TreeEntry) (plumbing.Hash, error) {
	t := &object.Tree{}
	for _, e := range entries {
		t.Entries = append(t.Entries, e)
	}
	sort.Slice(t.Entries, func(i, j int) bool {
		return gitSortName(t.Entries[i]) < gitSortName(t.Entries[j])
	})
	obj := st.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

func gitSortName(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// writeEmptyTree stores the empty tree (a commit must name a tree).
func writeEmptyTree(st storer.EncodedObjectStorer) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	if err := (&object.Tree{}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

func writeBlob(st storer.EncodedObjectStorer, data []byte) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// listFiles lists the non-folder paths under dir of a tree ("" or "." for
// all), for pruning.
func listFiles(st storer.EncodedObjectStorer, root plumbing.Hash, dir string) ([]string, error) {
	if root.IsZero() {
		return nil, nil
	}
	if dir == "" {
		dir = "."
	}
	t := &Tree{store: st, root: root}
	if _, err := t.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing under dir yet
	}
	var files []string
	err := fs.WalkDir(t, dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case !d.IsDir():
			files = append(files, p)
		}
		return nil
	})
	return files, err
}
