package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// Fleet is the regatta repository content an import produces.
type Fleet struct {
	Clusters    []*spec.Cluster
	Profiles    []*spec.Profile
	Classifiers []*spec.Classifier
	// EventSources are written as events/<name>.yaml.
	EventSources []*spec.EventSource
	// Alerts are written as alerts/<name>.yaml.
	Alerts []*spec.Alert
	// Files are other files the fleet needs (manifests taken out of
	// ConfigMaps), by repository-relative path.
	Files map[string][]byte
}

// header starts every file an import writes.
const header = "# Written by `regatta import %s`; edit freely (a new import overwrites this file).\n"

// Write writes the fleet's documents into dir (clusters/<name>/cluster.yaml,
// profiles/<name>.yaml, classifiers/<name>.yaml, events/<name>.yaml,
// alerts/<name>.yaml). A file whose content is
// unchanged is not rewritten, so an import run twice changes nothing. It
// returns the repository-relative paths of the documents.
func (f *Fleet) Write(dir, tool string) ([]string, error) {
	var files []string
	put := func(rel string, doc any) error {
		files = append(files, rel)
		return writeDoc(filepath.Join(dir, filepath.FromSlash(rel)), fmt.Sprintf(header, tool), doc)
	}
	var errs []error
	for _, c := range f.Clusters {
		errs = append(errs, put(path.Join(spec.ClustersDir, c.Metadata.Name, "cluster.yaml"), c))
	}
	for _, p := range f.Profiles {
		errs = append(errs, put(path.Join(spec.ProfilesDir, p.Metadata.Name+".yaml"), p))
	}
	for _, c := range f.Classifiers {
		errs = append(errs, put(path.Join(spec.ClassifiersDir, c.Metadata.Name+".yaml"), c))
	}
	for _, e := range f.EventSources {
		errs = append(errs, put(path.Join(spec.EventsDir, e.Metadata.Name+".yaml"), e))
	}
	for _, a := range f.Alerts {
		errs = append(errs, put(path.Join(spec.AlertsDir, a.Metadata.Name+".yaml"), a))
	}
	for _, rel := range sortedFiles(f.Files) {
		files = append(files, rel)
		errs = append(errs, WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), f.Files[rel]))
	}
	return files, errors.Join(errs...)
}

func sortedFiles(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Marshal returns a document as the import writes it.
func Marshal(doc any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeDoc(file, head string, doc any) error {
	data, err := Marshal(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := checkOverwrite(file); err != nil {
		return err
	}
	return WriteFile(file, append([]byte(head), data...))
}

// ErrForeignFile is wrapped when a document would overwrite a file that
// is not a regatta document.
var ErrForeignFile = errors.New("not a regatta document; not overwritten (import with --out into another folder)")

// checkOverwrite refuses to replace an existing file that is not one of
// regatta's documents: an import in place must not destroy the source.
func checkOverwrite(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	docs, err := ParseDocs(file, data)
	if err == nil && len(docs) == 1 && strings.HasPrefix(Str(docs[0].Obj, "apiVersion"), "regatta.dev/") {
		return nil
	}
	return fmt.Errorf("%s: %w", file, ErrForeignFile)
}

// WriteFile writes data to file unless it holds that already, creating
// its folder.
func WriteFile(file string, data []byte) error {
	if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}

// CopyTree copies the files of src into dst (the add-on sources an
// imported fleet refers to), skipping .git and leaving files that are
// already equal alone.
func CopyTree(src fs.FS, dst string) error {
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git":
			return fs.SkipDir
		case d.IsDir() || !d.Type().IsRegular():
			return nil
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		return WriteFile(filepath.Join(dst, filepath.FromSlash(p)), data)
	})
}

// Validate checks the fleet written in dir as `regatta validate` does
// offline (the format, then each profile's templates and add-on files:
// YAML syntax, documents that are not objects, template parse errors and
// literal bombs) and adds its errors to the report: what the source held
// that regatta refuses is then in the report too.
func Validate(dir string, report *Report) {
	fsys := os.DirFS(dir)
	repo, diags := spec.Load(fsys)
	r := render.New(render.Options{})
	for _, p := range repo.Profiles {
		diags = append(diags, r.CheckTemplates(fsys, p)...)
	}
	for _, d := range diags.Errors() {
		report.AddFinding(Finding{File: d.File, Line: d.Line, Field: d.Field, Message: "the imported fleet is invalid here: " + d.Message})
	}
}

// PatchSelector converts a Kustomize-style patch target (group, version,
// kind, name, namespace, labelSelector, annotationSelector), as Flux and
// Sveltos write it; nil for no target.
func PatchSelector(t map[string]any) *spec.PatchSelector {
	if t == nil {
		return nil
	}
	return &spec.PatchSelector{
		Group:              Str(t, "group"),
		Version:            Str(t, "version"),
		Kind:               Str(t, "kind"),
		Name:               Str(t, "name"),
		Namespace:          Str(t, "namespace"),
		LabelSelector:      Str(t, "labelSelector"),
		AnnotationSelector: Str(t, "annotationSelector"),
	}
}
