package render

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/spec"
)

// errReadOnly is returned by every write kustomize might attempt.
var errReadOnly = errors.New("the repository is read-only during a render")

// kustFS adapts an add-on's view of the repository to kustomize's
// filesys.FileSystem. "/" is the repository root: kustomize cannot name a
// path outside it, and symlinks are resolved inside it. Reads go through
// addonRender.readFile (SOPS, templates); kustomization files are checked
// for remote references first; overrides replace the root kustomization
// with one carrying the add-on's targetNamespace and patches. Writes fail,
// except in kustomize's clone folders when remote bases are allowed.
type kustFS struct {
	a         *addonRender
	overrides map[string][]byte
	disk      filesys.FileSystem
	cloneDir  string
	// failure is the first read failure of ours (an escaping path, a
	// template, SOPS or remote error): kustomize flattens errors into
	// strings, so renderKustomize reports this one instead.
	failure error
	// lastPath and lastData are the last repository file read, which a
	// YAML error of kustomize's is about (see yamlError).
	lastPath string
	lastData []byte
	// shared is set while the build shares kustomizeMu with others: a
	// kustomization with a custom OpenAPI schema then stops it (see
	// runKustomize).
	shared bool
}

// fail records err as the build's failure if it is one of ours.
func (k *kustFS) fail(p string, err error) error {
	var re *Error
	switch {
	case k.failure != nil:
	case errors.As(err, &re):
		k.failure = err
	case errors.Is(err, spec.ErrPathEscapes):
		k.failure = &Error{File: p, Err: err}
	}
	return err
}

func newKustFS(a *addonRender) *kustFS {
	return &kustFS{
		a:         a,
		overrides: map[string][]byte{},
		disk:      filesys.MakeFsOnDisk(),
		cloneDir:  filepath.Join(tempDir(), "kustomize-"),
	}
}

// tempDir is where kustomize clones remote bases (symlinks resolved, as
// kustomize resolves them).
func tempDir() string {
	if d, err := filepath.EvalSymlinks(os.TempDir()); err == nil {
		return d
	}
	return os.TempDir()
}

// onDisk reports whether p is inside a folder kustomize cloned a remote
// base into, which is read from the real disk when remote bases are on.
func (k *kustFS) onDisk(p string) bool {
	if !k.a.allowRemote || !strings.HasPrefix(p, k.cloneDir) {
		return false
	}
	k.a.usedRemote.Store(true)
	return true
}

// repoPath maps a kustomize path to a repository-relative one. Kustomize
// joins relative references to absolute folders itself, and such joins
// stop at "/": "../../../etc/passwd" from addons/x names etc/passwd of the
// repository. A path that still climbs keeps its "..", so that resolving
// it fails with spec.ErrPathEscapes.
func repoPath(p string) string {
	return path.Clean(strings.TrimPrefix(filepath.ToSlash(p), "/"))
}

// absPath maps a repository-relative path to kustomize's view.
func absPath(p string) string {
	if p == "." {
		return "/"
	}
	return "/" + p
}

func (k *kustFS) Create(p string) (filesys.File, error) {
	if k.onDisk(p) {
		return k.disk.Create(p)
	}
	return nil, &fs.PathError{Op: "create", Path: p, Err: errReadOnly}
}

func (k *kustFS) Mkdir(p string) error {
	if k.onDisk(p) {
		return k.disk.Mkdir(p)
	}
	return &fs.PathError{Op: "mkdir", Path: p, Err: errReadOnly}
}

func (k *kustFS) MkdirAll(p string) error {
	if k.onDisk(p) {
		return k.disk.MkdirAll(p)
	}
	return &fs.PathError{Op: "mkdir", Path: p, Err: errReadOnly}
}

func (k *kustFS) RemoveAll(p string) error {
	if k.onDisk(p) {
		return k.disk.RemoveAll(p)
	}
	return &fs.PathError{Op: "remove", Path: p, Err: errReadOnly}
}

func (k *kustFS) WriteFile(p string, _ []byte) error {
	return &fs.PathError{Op: "write", Path: p, Err: errReadOnly}
}

func (k *kustFS) Open(p string) (filesys.File, error) {
	if k.onDisk(p) {
		return k.disk.Open(p)
	}
	data, err := k.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(data), name: path.Base(p), size: int64(len(data))}, nil
}

func (k *kustFS) IsDir(p string) bool {
	if k.onDisk(p) {
		return k.disk.IsDir(p)
	}
	return k.a.fs.isDir(repoPath(p))
}

func (k *kustFS) Exists(p string) bool {
	if k.onDisk(p) {
		return k.disk.Exists(p)
	}
	rp := repoPath(p)
	if _, ok := k.overrides[rp]; ok {
		return true
	}
	_, err := k.a.fs.Stat(rp)
	return err == nil
}

func (k *kustFS) ReadDir(p string) ([]string, error) {
	if k.onDisk(p) {
		return k.disk.ReadDir(p)
	}
	entries, err := k.a.fs.ReadDir(repoPath(p))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// CleanedAbs resolves symlinks inside the repository and splits the path
// into a confirmed folder and a file name ("" for a folder).
func (k *kustFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	if k.onDisk(p) {
		return k.disk.CleanedAbs(p)
	}
	resolved, err := k.a.fs.resolve(repoPath(p))
	if err != nil {
		return "", "", k.fail(repoPath(p), err)
	}
	info, err := fs.Stat(k.a.fs.fsys, resolved)
	if err != nil {
		return "", "", fmt.Errorf("%s does not exist", resolved)
	}
	if info.IsDir() {
		return filesys.ConfirmedDir(absPath(resolved)), "", nil
	}
	return filesys.ConfirmedDir(absPath(path.Dir(resolved))), path.Base(resolved), nil
}

func (k *kustFS) Glob(pattern string) ([]string, error) {
	if k.onDisk(pattern) {
		return k.disk.Glob(pattern)
	}
	matches, err := fs.Glob(k.a.fs, repoPath(pattern))
	for i, m := range matches {
		matches[i] = absPath(m)
	}
	return matches, err
}

// ReadFile returns an override, or the file through the add-on's read
// pipeline. A kustomization file is checked for remote references.
func (k *kustFS) ReadFile(p string) ([]byte, error) {
	data, err := k.readFile(p)
	if err == nil && k.shared && isKustomizationFile(p) && declaresSchema(data) {
		k.failure = errCustomSchema
		return nil, errCustomSchema
	}
	return data, err
}

func (k *kustFS) readFile(p string) ([]byte, error) {
	if k.onDisk(p) {
		return k.disk.ReadFile(p)
	}
	rp := repoPath(p)
	if data, ok := k.overrides[rp]; ok {
		return data, nil
	}
	data, err := k.a.readFile(rp)
	if err != nil {
		return nil, k.fail(rp, err)
	}
	k.lastPath, k.lastData = rp, data
	if isKustomizationFile(rp) {
		if err := k.a.checkRemote(rp, data); err != nil {
			return nil, k.fail(rp, err)
		}
	}
	return data, nil
}

// declaresSchema reports whether a kustomization sets the top-level
// `openapi` field. One that does not parse is left to kustomize to report.
func declaresSchema(kustomization []byte) bool {
	if !bytes.Contains(kustomization, []byte("openapi")) {
		return false
	}
	var top map[string]any
	if err := yaml.Unmarshal(kustomization, &top); err != nil {
		return false
	}
	_, ok := top["openapi"]
	return ok
}

func (k *kustFS) Walk(p string, walkFn filepath.WalkFunc) error {
	if k.onDisk(p) {
		return k.disk.Walk(p, walkFn)
	}
	return fs.WalkDir(k.a.fs, repoPath(p), func(rp string, d fs.DirEntry, err error) error {
		if err != nil {
			return walkFn(absPath(rp), nil, err)
		}
		info, err := d.Info()
		return walkFn(absPath(rp), info, err)
	})
}

// memFile is a read-only filesys.File over bytes.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Write([]byte) (int, error) { return 0, errReadOnly }
func (f *memFile) Close() error              { return nil }
func (f *memFile) Stat() (os.FileInfo, error) {
	return memInfo{name: f.name, size: f.size}, nil
}

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
