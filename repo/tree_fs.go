package repo

import (
	"io/fs"
	"sort"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Open opens a file or folder, following symlinks.
func (t *Tree) Open(name string) (fs.File, error) {
	n, err := t.resolve("open", name, true)
	if err != nil {
		return nil, err
	}
	switch {
	case n.mode == filemode.Dir:
		entries, err := t.dirEntries(n)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return &dirFile{info: t.info(n, 0), entries: entries}, nil
	case n.mode == filemode.Submodule:
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrSubmodule}
	}
	data, err := t.readBlob(n.hash)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return newBlobFile(t.info(n, int64(len(data))), data), nil
}

// ReadFile returns the content of a file, following symlinks.
func (t *Tree) ReadFile(name string) ([]byte, error) {
	n, err := t.resolve("read", name, true)
	if err != nil {
		return nil, err
	}
	switch n.mode {
	case filemode.Dir:
		return nil, &fs.PathError{Op: "read", Path: name, Err: errIsDir}
	case filemode.Submodule:
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrSubmodule}
	}
	data, err := t.readBlob(n.hash)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, nil
}

// ReadDir lists a folder sorted by name, following symlinks to it. Entries
// that are symlinks are reported as such.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := t.resolve("readdir", name, true)
	if err != nil {
		return nil, err
	}
	if n.mode != filemode.Dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errNotDir}
	}
	entries, err := t.dirEntries(n)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	return entries, nil
}

// Stat describes a file or folder, following symlinks.
func (t *Tree) Stat(name string) (fs.FileInfo, error) {
	return t.stat("stat", name, true)
}

// Lstat describes a file or folder without following a final symlink.
func (t *Tree) Lstat(name string) (fs.FileInfo, error) {
	return t.stat("lstat", name, false)
}

func (t *Tree) stat(op, name string, follow bool) (fs.FileInfo, error) {
	n, err := t.resolve(op, name, follow)
	if err != nil {
		return nil, err
	}
	size, err := t.size(n)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return t.info(n, size), nil
}

// ReadLink returns the target of a symlink as stored, even one that points
// outside the tree, so that a validator can report it.
func (t *Tree) ReadLink(name string) (string, error) {
	n, err := t.resolve("readlink", name, false)
	if err != nil {
		return "", err
	}
	if n.mode != filemode.Symlink {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: errNotSymlink}
	}
	target, err := t.readBlob(n.hash)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	return string(target), nil
}

func (t *Tree) dirEntries(n node) ([]fs.DirEntry, error) {
	entries, err := t.entries(n.hash)
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, len(entries))
	for i, e := range entries {
		out[i] = &dirEntry{t: t, n: node{name: e.Name, mode: e.Mode, hash: e.Hash}}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (t *Tree) size(n node) (int64, error) {
	if n.mode == filemode.Dir || n.mode == filemode.Submodule {
		return 0, nil
	}
	return t.store.EncodedObjectSize(n.hash)
}

func (t *Tree) info(n node, size int64) *fileInfo {
	return &fileInfo{name: n.name, mode: fsMode(n.mode), size: size, modTime: t.modTime}
}

func fsMode(m filemode.FileMode) fs.FileMode {
	switch m {
	case filemode.Dir:
		return fs.ModeDir | 0o755
	case filemode.Executable:
		return 0o755
	case filemode.Symlink:
		return fs.ModeSymlink | 0o777
	case filemode.Submodule:
		return fs.ModeIrregular
	}
	return 0o644
}
