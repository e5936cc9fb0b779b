package diff

import (
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// redaction decides how much of an updated object its diff may show.
// Secrets hide their data; objects that may hold values decrypted from
// SOPS files hide everything (see sensitive).
func (c *comparison) redaction(profile string, prev, cur rendered) redactMode {
	if c.base.sensitive(profile, prev) || c.head.sensitive(profile, cur) {
		return redactAll
	}
	if isSecret(prev.Unstructured) || isSecret(cur.Unstructured) {
		return redactSecret
	}
	return redactNone
}

// sensitive reports whether an object may carry values decrypted from a
// SOPS file: it was read from one; or its add-on is a Helm chart with an
// encrypted values file; or it was generated (a kustomize generator, so
// its source is no plain manifest) by an add-on whose folders hold an
// encrypted file.
func (s *side) sensitive(profile string, o rendered) bool {
	if s.sops.encrypted(o.Source) {
		return true
	}
	prof := s.Fleet.Profile(profile)
	if prof == nil {
		return false
	}
	for i := range prof.Spec.Addons {
		a := &prof.Spec.Addons[i]
		if a.Name != o.addon {
			continue
		}
		if a.Helm != nil && s.sops.anyEncrypted(a.Helm.ValuesFiles) {
			return true
		}
		return !s.sops.plainManifest(o.Source) && s.sops.anyEncrypted(addonPaths(prof, a))
	}
	return false
}

// addonPaths lists the folders an add-on reads: its source path and the
// paths of its overlays.
func addonPaths(p *spec.Profile, a *spec.Addon) []string {
	var out []string
	switch {
	case a.Helm != nil && a.Helm.Path != "":
		out = append(out, a.Helm.Path)
	case a.Kustomize != nil:
		out = append(out, a.Kustomize.Path)
	case a.Manifests != nil:
		out = append(out, a.Manifests.Path)
	}
	for _, o := range p.Spec.Overlays {
		if o.Addon == a.Name && o.Path != "" {
			out = append(out, o.Path)
		}
	}
	return out
}

// sopsIndex remembers which files and folders of a tree hold SOPS data.
type sopsIndex struct {
	fsys  fs.FS
	mu    sync.Mutex
	files map[string]bool // file -> encrypted
	trees map[string]bool // folder or file -> holds an encrypted file
}

func newSopsIndex(fsys fs.FS) *sopsIndex {
	return &sopsIndex{fsys: fsys, files: map[string]bool{}, trees: map[string]bool{}}
}

// encrypted reports whether p is a regular file in SOPS format.
func (x *sopsIndex) encrypted(p string) bool {
	if p == "" || !fs.ValidPath(p) || x.fsys == nil {
		return false
	}
	x.mu.Lock()
	enc, ok := x.files[p]
	x.mu.Unlock()
	if ok {
		return enc
	}
	data, err := fs.ReadFile(x.fsys, p)
	enc = err == nil && sops.IsEncrypted(data)
	x.mu.Lock()
	x.files[p] = enc
	x.mu.Unlock()
	return enc
}

// plainManifest reports whether p is a regular, unencrypted file that is
// not a kustomization (whose generators may read encrypted files).
func (x *sopsIndex) plainManifest(p string) bool {
	if p == "" || !fs.ValidPath(p) || x.fsys == nil {
		return false
	}
	switch path.Base(p) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return false
	}
	info, err := fs.Stat(x.fsys, p)
	return err == nil && info.Mode().IsRegular() && !x.encrypted(p)
}

// anyEncrypted reports whether any of the paths (files or folders, walked
// recursively) holds an encrypted file. A templated path is replaced by
// the folder before its first template action.
func (x *sopsIndex) anyEncrypted(paths []string) bool {
	for _, p := range paths {
		if x.treeEncrypted(untemplated(p)) {
			return true
		}
	}
	return false
}

func untemplated(p string) string {
	i := strings.Index(p, "{{")
	if i < 0 {
		return p
	}
	return path.Dir(p[:i] + "x")
}

func (x *sopsIndex) treeEncrypted(root string) bool {
	if root == "" || !fs.ValidPath(root) || x.fsys == nil {
		return false
	}
	x.mu.Lock()
	found, ok := x.trees[root]
	x.mu.Unlock()
	if ok {
		return found
	}
	_ = fs.WalkDir(x.fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && x.encrypted(p) {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	x.mu.Lock()
	x.trees[root] = found
	x.mu.Unlock()
	return found
}
