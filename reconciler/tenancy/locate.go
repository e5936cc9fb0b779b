package tenancy

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// locate finds the file and line an object came from: the document of its
// source file with its kind and name, or else the add-on in the profile.
func locate(fsys fs.FS, prof *spec.Profile, addon string, o render.Object) (string, int) {
	if fsys != nil && o.Source != "" {
		if line := documentLine(fsys, o.Source, o.GetKind(), o.GetName()); line > 0 {
			return o.Source, line
		}
	}
	for i, a := range prof.Spec.Addons {
		if a.Name == addon {
			return prof.Source.File, prof.Source.LineOf(fmt.Sprintf("spec.addons[%d]", i))
		}
	}
	return prof.Source.File, prof.Source.Line
}

// documentLine returns the first line of the document of file holding an
// object of this kind and name, or 0.
func documentLine(fsys fs.FS, file, kind, name string) int {
	resolved, err := spec.ResolvePath(fsys, file)
	if err != nil {
		return 0
	}
	data, err := fs.ReadFile(fsys, resolved)
	if err != nil {
		return 0
	}
	line, start := 1, 1
	var doc bytes.Buffer
	check := func() int {
		var m struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if yaml.Unmarshal(doc.Bytes(), &m) != nil {
			return 0
		}
		if m.Kind == kind && m.Metadata.Name == name {
			return firstContent(doc.String(), start)
		}
		if strings.HasSuffix(m.Kind, "List") {
			if n := listItemLine(doc.Bytes(), kind, name); n > 0 {
				return start + n - 1
			}
		}
		return 0
	}
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(l, "---") {
			if n := check(); n > 0 {
				return n
			}
			doc.Reset()
			start = line + 1
		} else {
			doc.WriteString(l)
		}
		line++
	}
	return check()
}

// listItemLine returns the line (in doc) of the item of a List document
// with this kind and name, or 0: render flattens Lists, and an item is
// placed at its own line rather than at the List's.
func listItemLine(doc []byte, kind, name string) int {
	var root yamlv3.Node
	if yamlv3.Unmarshal(doc, &root) != nil || len(root.Content) == 0 {
		return 0
	}
	items := spec.MappingValue(root.Content[0], "items")
	if items == nil || items.Kind != yamlv3.SequenceNode {
		return 0
	}
	for _, it := range items.Content {
		k, meta := spec.MappingValue(it, "kind"), spec.MappingValue(it, "metadata")
		if n := spec.MappingValue(meta, "name"); k != nil && n != nil && k.Value == kind && n.Value == name {
			return it.Line
		}
	}
	return 0
}

func firstContent(doc string, start int) int {
	for i, l := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return start + i
		}
	}
	return start
}
