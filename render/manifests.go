package render

import (
	"io/fs"
	"path"
	"sort"
	"strings"
)

// manifestExts are the file extensions a manifests folder is read for.
var manifestExts = []string{".yaml", ".yml", ".json"}

// renderManifests reads a manifests path: one file, or every .yaml, .yml
// and .json file below a folder, recursively and in lexical path order.
// Symlinks are followed inside the repository only.
func (a *addonRender) renderManifests(p string) ([]Object, error) {
	files, err := a.manifestFiles(p)
	if err != nil {
		return nil, err
	}
	var out []Object
	for _, f := range files {
		if err := a.ctx.Err(); err != nil {
			return nil, err
		}
		data, err := a.readFile(f)
		if err != nil {
			return nil, fileError(f, 0, describePathError(f, err))
		}
		objs, err := decodeObjects(f, data)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// manifestFiles lists the files of a manifests path, sorted.
func (a *addonRender) manifestFiles(p string) ([]string, error) {
	info, err := a.fs.Stat(p)
	if err != nil {
		return nil, fileError(p, 0, describePathError(p, err))
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var files []string
	if err := a.walk(p, hasManifestExt, map[string]bool{}, &files); err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// walk collects the files below dir whose names keep accepts. seen holds
// the resolved folders already walked, so that a symlink loop ends.
func (a *addonRender) walk(dir string, keep func(string) bool, seen map[string]bool, files *[]string) error {
	resolved, err := a.fs.resolve(dir)
	if err != nil {
		return fileError(dir, 0, describePathError(dir, err))
	}
	if seen[resolved] {
		return nil
	}
	seen[resolved] = true
	entries, err := fs.ReadDir(a.fs.fsys, resolved)
	if err != nil {
		return fileError(dir, 0, err)
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			info, err := a.fs.Stat(p)
			if err != nil {
				return fileError(p, 0, describePathError(p, err))
			}
			isDir = info.IsDir()
		}
		switch {
		case isDir:
			if err := a.walk(p, keep, seen, files); err != nil {
				return err
			}
		case keep(e.Name()):
			*files = append(*files, p)
		}
	}
	return nil
}

func hasManifestExt(name string) bool {
	for _, ext := range manifestExts {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			return true
		}
	}
	return false
}
