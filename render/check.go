package render

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// maxCheckedFiles bounds the files CheckTemplates reads per add-on.
const maxCheckedFiles = 2000

// CheckTemplates checks what of a profile's templates can be checked
// without a cluster (regatta validate): every templated field (add-on and
// overlay paths, values file paths, values string leaves) and, when its
// path holds no template, the files of a template: true add-on and each
// Helm values file. It reports parse errors and literal bombs (loops or
// sizes written as numbers past the limits), with file and line. The
// files of plain manifests and Kustomize add-ons (not templated) are
// parsed: YAML syntax, and for manifests apiVersion, kind and List items,
// as the render decodes them. What depends on the cluster's data is
// checked when rendering.
func (r *Renderer) CheckTemplates(fsys fs.FS, p *spec.Profile) spec.Diagnostics {
	c := &checker{r: r, fsys: fsys, prof: p}
	for i := range p.Spec.Addons {
		c.addon(i, &p.Spec.Addons[i])
	}
	for i := range p.Spec.Overlays {
		o := &p.Spec.Overlays[i]
		field := fmt.Sprintf("spec.overlays[%d]", i)
		c.field(field+".path", o.Path)
		c.values(field+".values", o.Values)
	}
	return c.diags
}

type checker struct {
	r     *Renderer
	fsys  fs.FS
	prof  *spec.Profile
	diags spec.Diagnostics
}

func (c *checker) addon(i int, a *spec.Addon) {
	field := fmt.Sprintf("spec.addons[%d]", i)
	switch {
	case a.Kustomize != nil:
		c.field(field+".kustomize.path", a.Kustomize.Path)
		c.files(a.Template, a.Kustomize.Path, func(string) bool { return true })
		if !a.Template && a.OCI == nil { // an artifact's files are checked when pulled
			c.walk(a.Kustomize.Path, hasYAMLExt, c.syntax)
		}
	case a.Manifests != nil:
		c.field(field+".manifests.path", a.Manifests.Path)
		c.files(a.Template, a.Manifests.Path, hasManifestExt)
		if !a.Template && a.OCI == nil { // an artifact's files are checked when pulled
			c.walk(a.Manifests.Path, hasManifestExt, c.manifests)
		}
	case a.Jsonnet != nil:
		c.field(field+".jsonnet.path", a.Jsonnet.Path)
	case a.Helm != nil:
		c.field(field+".helm.path", a.Helm.Path)
		for j, f := range a.Helm.ValuesFiles {
			c.field(fmt.Sprintf("%s.helm.valuesFiles[%d]", field, j), f)
			c.files(true, f, func(string) bool { return true })
		}
		c.values(field+".helm.values", a.Helm.Values)
	}
}

// field checks a templated profile field.
func (c *checker) field(field, text string) {
	if !strings.Contains(text, "{{") {
		return
	}
	if err := c.r.templates.get(field, []byte(text)).err; err != nil {
		var re *Error
		msg := err.Error()
		if errors.As(err, &re) {
			msg = re.Err.Error()
		}
		c.diags = append(c.diags, spec.Diagnostic{
			Severity: spec.SeverityError,
			File:     c.prof.Source.File,
			Line:     c.prof.Source.LineOf(field),
			Field:    field,
			Message:  msg,
		})
	}
}

func (c *checker) values(field string, v any) {
	switch x := v.(type) {
	case string:
		c.field(field, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c.values(field+"."+k, x[k])
		}
	case []any:
		for i, e := range x {
			c.values(fmt.Sprintf("%s[%d]", field, i), e)
		}
	}
}

// files checks the templates of a file or folder (when templated and the
// path itself holds no template), the files that want selects.
func (c *checker) files(templated bool, p string, want func(string) bool) {
	if templated {
		c.walk(p, want, c.file)
	}
}

// walk calls check on the files of a file or folder that want selects,
// when the path holds no template and the profile may read it.
func (c *checker) walk(p string, want func(string) bool, check func(string)) {
	if p == "" || strings.Contains(p, "{{") {
		return
	}
	p = path.Clean(p)
	if _, err := spec.ResolvePath(spec.Confine(c.fsys, c.prof.Root()), p); err != nil {
		return // the path's own error is reported by the load
	}
	n := 0
	_ = fs.WalkDir(c.fsys, p, func(f string, d fs.DirEntry, err error) error {
		if err != nil || n >= maxCheckedFiles {
			return fs.SkipDir
		}
		if d.IsDir() || !want(d.Name()) {
			return nil
		}
		n++
		check(f)
		return nil
	})
}

// manifests checks that a plain manifest file decodes as the render
// decodes it: YAML syntax, apiVersion and kind, List items.
func (c *checker) manifests(f string) {
	data, err := fs.ReadFile(c.fsys, f)
	if err != nil {
		return
	}
	if _, err := decodeObjects(f, data); err != nil {
		c.fileError(f, err)
	}
}

// syntax checks the YAML syntax of a file of a Kustomize folder.
func (c *checker) syntax(f string) {
	data, err := fs.ReadFile(c.fsys, f)
	if err != nil {
		return
	}
	for _, doc := range splitDocuments(data) {
		if _, err := yaml.YAMLToJSON(doc.data); err != nil {
			line, msg := yamlErrorLine(doc.data, err)
			c.fileError(f, &Error{File: f, Line: doc.line + max(line, 1) - 1, Err: errors.New(msg)})
			return
		}
	}
}

func (c *checker) fileError(f string, err error) {
	d := spec.Diagnostic{Severity: spec.SeverityError, File: f, Message: err.Error()}
	var re *Error
	if errors.As(err, &re) {
		d.File, d.Line, d.Message = re.File, re.Line, re.Err.Error()
	}
	c.diags = append(c.diags, d)
}

func hasYAMLExt(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

func (c *checker) file(f string) {
	data, err := fs.ReadFile(c.fsys, f)
	if err != nil || !isTemplate(data) || sops.IsEncrypted(data) {
		return
	}
	if err := c.r.templates.get(f, data).err; err != nil {
		c.fileError(f, err)
	}
}
