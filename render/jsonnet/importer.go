package jsonnet

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	gojsonnet "github.com/google/go-jsonnet"
)

// ErrOutside fails an import whose path leaves the repository (an
// absolute path, or one climbing above the root with "..").
var ErrOutside = errors.New("leaves the repository")

// importer resolves imports as the CLI's FileImporter does (the importing
// file's folder first, then the library folders, the last first) on
// repository paths, through the Reader.
type importer struct {
	rd    Reader
	jpath []string
	// found keeps what each path read, so that a path read twice gives
	// the same contents (go-jsonnet requires it).
	found map[string]*entry
}

type entry struct {
	contents gojsonnet.Contents
	exists   bool
}

// Import implements gojsonnet.Importer.
func (im *importer) Import(importedFrom, importedPath string) (gojsonnet.Contents, string, error) {
	if name, ok := strings.CutPrefix(importedPath, dataPrefix); ok {
		return im.data(name)
	}
	if path.IsAbs(importedPath) {
		return gojsonnet.Contents{}, "", fmt.Errorf("import %q: an absolute path %w", importedPath, ErrOutside)
	}
	dirs := []string{path.Dir(importedFrom)}
	if importedFrom != "" {
		for i := len(im.jpath) - 1; i >= 0; i-- {
			dirs = append(dirs, im.jpath[i])
		}
	}
	for _, dir := range dirs {
		p := path.Join(dir, importedPath)
		if p == ".." || strings.HasPrefix(p, "../") {
			return gojsonnet.Contents{}, "", fmt.Errorf("import %q from %s %w", importedPath, importedFrom, ErrOutside)
		}
		e, err := im.read(p)
		if err != nil {
			return gojsonnet.Contents{}, "", fmt.Errorf("import %q: %w", importedPath, err)
		}
		if e.exists {
			return e.contents, p, nil
		}
	}
	return gojsonnet.Contents{}, "", fmt.Errorf("couldn't open import %q: no match locally or in the Jsonnet library paths", importedPath)
}

// read reads p once.
func (im *importer) read(p string) (*entry, error) {
	if e, ok := im.found[p]; ok {
		return e, nil
	}
	data, err := im.rd.ReadFile(p)
	var e entry
	switch {
	case err == nil:
		e = entry{contents: gojsonnet.MakeContentsRaw(data), exists: true}
	case errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrOutside):
	default:
		return nil, err
	}
	if im.found == nil {
		im.found = map[string]*entry{}
	}
	im.found[p] = &e
	return &e, nil
}

// data imports one item of the cluster's data.
func (im *importer) data(name string) (gojsonnet.Contents, string, error) {
	foundAt := dataPrefix + name
	if e, ok := im.found[foundAt]; ok {
		return e.contents, foundAt, nil
	}
	js, err := im.rd.Data(name)
	if err != nil {
		return gojsonnet.Contents{}, "", fmt.Errorf("%s.%s: %w", DataVar, name, err)
	}
	if im.found == nil {
		im.found = map[string]*entry{}
	}
	e := &entry{contents: gojsonnet.MakeContentsRaw(js), exists: true}
	im.found[foundAt] = e
	return e.contents, foundAt, nil
}
