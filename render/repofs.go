package render

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/regatta-dev/regatta/spec"
)

// repoFS is the repository tree as an add-on render sees it: every path is
// resolved with spec.ResolvePath (so no symlink leads outside the
// repository) and recorded, so that the cache key of the next render can
// hash exactly what this one read. It is an fs.FS over the whole tree.
type repoFS struct {
	fsys fs.FS
	deps *depSet
}

func newRepoFS(fsys fs.FS) *repoFS {
	return &repoFS{fsys: fsys, deps: &depSet{paths: map[string]bool{}}}
}

// resolve cleans p, follows its symlinks inside the repository and
// records both the path and the symlinks it went through.
func (r *repoFS) resolve(p string) (string, error) {
	p = path.Clean(p)
	resolved, err := spec.ResolvePath(r.fsys, p)
	if err != nil {
		return "", err
	}
	r.deps.add(resolved)
	if resolved != p {
		r.recordLinks(p)
	}
	return resolved, nil
}

// recordLinks records every symlink on the way to p, since what p reads
// changes when a link is re-pointed.
func (r *repoFS) recordLinks(p string) {
	rl, ok := r.fsys.(fs.ReadLinkFS)
	if !ok {
		return
	}
	parts := strings.Split(p, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		if info, err := rl.Lstat(prefix); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			r.deps.add(prefix)
		}
	}
}

// Open implements fs.FS with symlinks resolved inside the repository.
func (r *repoFS) Open(name string) (fs.File, error) {
	resolved, err := r.resolve(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return r.fsys.Open(resolved)
}

// ReadFile implements fs.ReadFileFS.
func (r *repoFS) ReadFile(name string) ([]byte, error) {
	resolved, err := r.resolve(name)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return fs.ReadFile(r.fsys, resolved)
}

// Stat implements fs.StatFS; it follows symlinks.
func (r *repoFS) Stat(name string) (fs.FileInfo, error) {
	resolved, err := r.resolve(name)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return fs.Stat(r.fsys, resolved)
}

// ReadDir implements fs.ReadDirFS. Entries keep their own type: a symlink
// is reported as a symlink, to be resolved by the caller.
func (r *repoFS) ReadDir(name string) ([]fs.DirEntry, error) {
	resolved, err := r.resolve(name)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	return fs.ReadDir(r.fsys, resolved)
}

// Lstat implements fs.ReadLinkFS on the tree as it is: name is not
// followed, nor are the folders on its way (spec.ResolvePath, which calls
// it, resolves a path's symlinks from its first component on).
func (r *repoFS) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(r.fsys, path.Clean(name)) }

// ReadLink implements fs.ReadLinkFS, as Lstat does.
func (r *repoFS) ReadLink(name string) (string, error) { return fs.ReadLink(r.fsys, path.Clean(name)) }

// isDir reports whether p resolves to a folder.
func (r *repoFS) isDir(p string) bool {
	info, err := r.Stat(p)
	return err == nil && info.IsDir()
}

// depSet is the set of repository paths one render read.
type depSet struct {
	mu    sync.Mutex
	paths map[string]bool
}

func (d *depSet) add(p string) {
	d.mu.Lock()
	d.paths[p] = true
	d.mu.Unlock()
}

// list returns the recorded paths, sorted, without those inside another
// recorded folder (whose tree hash covers them).
func (d *depSet) list() []string {
	d.mu.Lock()
	all := make([]string, 0, len(d.paths))
	for p := range d.paths {
		all = append(all, p)
	}
	d.mu.Unlock()
	sort.Strings(all)
	out := all[:0]
	for _, p := range all {
		if !coveredBy(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// coveredBy reports whether p lies inside one of the sorted paths kept so
// far. Only prefixes of p can cover it, and those sort before p.
func coveredBy(kept []string, p string) bool {
	for q := p; q != "."; {
		q = path.Dir(q)
		if i := sort.SearchStrings(kept, q); i < len(kept) && kept[i] == q {
			return true
		}
	}
	return false
}

// notExist tells whether err means a missing path (and not an escape).
func notExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) && !errors.Is(err, spec.ErrPathEscapes)
}

// describePathError turns fs errors into short user messages.
func describePathError(p string, err error) error {
	switch {
	case errors.Is(err, spec.ErrOutsideTenant):
		return fmt.Errorf("%s: %w", p, spec.ErrOutsideTenant)
	case errors.Is(err, spec.ErrPathEscapes):
		return fmt.Errorf("%s: %w", p, spec.ErrPathEscapes)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", p)
	}
	return err
}
