package spec

import (
	"fmt"
	"io/fs"
	"strings"
)

// ErrOutsideTenant is returned for a path of a tenant's profile that
// resolves outside the tenant's folder. It is also an ErrPathEscapes.
var ErrOutsideTenant error = outsideTenantError{}

type outsideTenantError struct{}

func (outsideTenantError) Error() string { return "path leaves the tenant's folder" }

// Is makes errors.Is(err, ErrPathEscapes) hold.
func (outsideTenantError) Is(target error) bool { return target == ErrPathEscapes }

// confinedFS is a tree whose paths ResolvePath only resolves inside root:
// the view a tenant's profile has of the repository.
type confinedFS struct {
	fs.FS
	root string
}

// Confine returns fsys as seen by a profile confined to the folder root:
// ResolvePath on it refuses every path (symlinks followed) that does not
// end inside root. An empty root returns fsys.
func Confine(fsys fs.FS, root string) fs.FS {
	if root == "" {
		return fsys
	}
	if c, ok := fsys.(*confinedFS); ok {
		fsys = c.FS
	}
	return &confinedFS{FS: fsys, root: root}
}

// ReadFile implements fs.ReadFileFS.
func (c *confinedFS) ReadFile(name string) ([]byte, error) { return fs.ReadFile(c.FS, name) }

// Stat implements fs.StatFS.
func (c *confinedFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(c.FS, name) }

// ReadDir implements fs.ReadDirFS.
func (c *confinedFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(c.FS, name) }

// ReadLink implements fs.ReadLinkFS.
func (c *confinedFS) ReadLink(name string) (string, error) { return fs.ReadLink(c.FS, name) }

// Lstat implements fs.ReadLinkFS.
func (c *confinedFS) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(c.FS, name) }

// resolveConfined resolves p in the underlying tree and checks that the
// result lies inside the root.
func (c *confinedFS) resolve(p string) (string, error) {
	resolved, err := ResolvePath(c.FS, p)
	if err != nil {
		return "", err
	}
	if !Inside(c.root, resolved) {
		if resolved != p {
			return "", fmt.Errorf("%q resolves to %s, outside %s/: %w", p, resolved, c.root, ErrOutsideTenant)
		}
		return "", fmt.Errorf("%q is outside %s/: %w", p, c.root, ErrOutsideTenant)
	}
	return resolved, nil
}

// Inside reports whether the clean relative path p is root or below it.
func Inside(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

// confinedTo returns the repository as profile p may read it: its FS
// confined to the tenant's folder for a tenant's profile.
func confinedTo(r *Repository, p *Profile) *Repository {
	if p.tenant == nil {
		return r
	}
	c := *r
	c.FS = Confine(r.FS, p.Root())
	return &c
}
