package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// ErrPathEscapes is returned for a path that leaves the repository.
var ErrPathEscapes = errors.New("path leaves the repository")

// maxLinkHops bounds symlink resolution, as the kernel's ELOOP does.
const maxLinkHops = 40

// ResolvePath cleans a repository-relative path and follows its symlinks
// inside fsys, returning the resolved path. A path that is absolute, climbs
// out with "..", or reaches outside through a symlink fails with
// ErrPathEscapes. The path need not exist.
//
// On a tree returned by Confine the resolved path must also lie inside the
// confining folder, or it fails with ErrOutsideTenant.
func ResolvePath(fsys fs.FS, p string) (string, error) {
	if c, ok := fsys.(*confinedFS); ok {
		return c.resolve(p)
	}
	if path.IsAbs(p) || strings.HasPrefix(p, "\\") {
		return "", fmt.Errorf("%q: absolute paths are not allowed: %w", p, ErrPathEscapes)
	}
	cur := path.Clean(p)
	if escapes(cur) {
		return "", fmt.Errorf("%q: %w", p, ErrPathEscapes)
	}
	rl, ok := fsys.(fs.ReadLinkFS)
	if !ok {
		return cur, nil
	}
	for hops := 0; ; hops++ {
		next, changed, err := resolveOnce(rl, cur)
		if err != nil {
			return "", fmt.Errorf("%q: %w", p, err)
		}
		if !changed {
			return cur, nil
		}
		if hops == maxLinkHops {
			return "", fmt.Errorf("%q: too many levels of symbolic links", p)
		}
		cur = next
	}
}

// resolveOnce replaces the first symlink component of p by its target.
func resolveOnce(fsys fs.ReadLinkFS, p string) (string, bool, error) {
	if p == "." {
		return p, false, nil
	}
	parts := strings.Split(p, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		info, err := fsys.Lstat(prefix)
		if err != nil {
			return p, false, nil // missing: nothing left to resolve
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := fsys.ReadLink(prefix)
		if err != nil {
			return "", false, err
		}
		if path.IsAbs(target) {
			return "", false, fmt.Errorf("symlink %s points outside: %w", prefix, ErrPathEscapes)
		}
		joined := path.Join(path.Dir(prefix), target, strings.Join(parts[i+1:], "/"))
		if escapes(joined) {
			return "", false, fmt.Errorf("symlink %s points outside: %w", prefix, ErrPathEscapes)
		}
		return joined, true, nil
	}
	return p, false, nil
}

func escapes(clean string) bool {
	return clean == ".." || strings.HasPrefix(clean, "../")
}

// IsTemplated reports whether a path holds template actions, which are
// only known once a cluster's data is at hand.
func IsTemplated(p string) bool { return strings.Contains(p, "{{") }

type pathKind int

const (
	pathAny pathKind = iota
	pathFile
	pathChart
)

// checkRepoPath reports a path that is empty, escapes the repository or
// does not exist as the wanted kind.
func checkRepoPath(fsys fs.FS, rep report, field, p string, want pathKind) (string, bool) {
	if p == "" {
		rep.errorf(field, "required")
		return "", false
	}
	if IsTemplated(p) || fsys == nil { // nil: the path is in an OCI artifact, read when rendering
		return "", false
	}
	resolved, err := ResolvePath(fsys, p)
	if err != nil {
		rep.errorf(field, "%v", err)
		return "", false
	}
	info, err := fs.Stat(fsys, resolved)
	switch {
	case err != nil:
		rep.errorf(field, "%s does not exist", p)
		return "", false
	case want == pathFile && info.IsDir():
		rep.errorf(field, "%s is a folder, not a file", p)
		return "", false
	case want == pathChart && !exists(fsys, path.Join(resolved, "Chart.yaml")):
		rep.errorf(field, "folder %s has no Chart.yaml", p)
		return "", false
	}
	return resolved, true
}

// KustomizationFiles are the names kustomize accepts, in its order.
var KustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// checkManifestsPath checks a manifests path and every symlink in it.
func checkManifestsPath(fsys fs.FS, rep report, field, p string) {
	if resolved, ok := checkRepoPath(fsys, rep, field, p, pathAny); ok {
		checkLinksInside(fsys, rep, field, resolved)
	}
}

// checkLinksInside reports each symlink under dir that leads out of the
// repository, as rendering would refuse it.
func checkLinksInside(fsys fs.FS, rep report, field, dir string) {
	_ = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			rep.errorf(field, "%v", err)
			return fs.SkipDir
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if _, err := ResolvePath(fsys, p); err != nil {
			rep.errorf(field, "%v", err)
		}
		return nil
	})
}

func checkKustomizePath(fsys fs.FS, rep report, field, p string) {
	resolved, ok := checkRepoPath(fsys, rep, field, p, pathAny)
	if !ok {
		return
	}
	checkLinksInside(fsys, rep, field, resolved)
	// A folder without a kustomization file is built as Flux does: as if
	// it listed every manifest below it.
	if info, err := fs.Stat(fsys, resolved); err == nil && !info.IsDir() {
		rep.errorf(field, "%s is a file, not a kustomization folder", p)
	}
}

func exists(fsys fs.FS, p string) bool {
	_, err := fs.Stat(fsys, p)
	return err == nil
}
