// Package migrate holds what the importers of other tools' repositories
// (migrate/flux, migrate/sveltos) share: documents read with their lines,
// the report of what could not be carried over, and the regatta fleet they
// write.
package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Doc is one YAML document of a source file, decoded, with the lines of
// its fields for the report.
type Doc struct {
	File string
	Obj  map[string]any
	node *yaml.Node
}

// APIGroup returns the group of the document's apiVersion ("" for core).
func (d *Doc) APIGroup() string {
	av, _ := d.Obj["apiVersion"].(string)
	if g, _, ok := strings.Cut(av, "/"); ok {
		return g
	}
	return ""
}

// Kind returns the document's kind.
func (d *Doc) Kind() string { return Str(d.Obj, "kind") }

// Name returns metadata.name.
func (d *Doc) Name() string { return Str(d.Obj, "metadata", "name") }

// Namespace returns metadata.namespace.
func (d *Doc) Namespace() string { return Str(d.Obj, "metadata", "namespace") }

// Line returns the line of a dotted field path such as "spec.chart.spec"
// (list items as [i]), or of the closest enclosing field that exists.
func (d *Doc) Line(field string) int {
	n := d.node
	if n == nil {
		return 0
	}
	line := n.Line
	for _, part := range splitField(field) {
		next, at := child(n, part)
		if next == nil {
			break
		}
		n, line = next, at
	}
	return line
}

func splitField(field string) []string {
	var out []string
	for _, p := range strings.Split(field, ".") {
		for p != "" {
			i := strings.IndexByte(p, '[')
			if i < 0 {
				out = append(out, p)
				break
			}
			if i > 0 {
				out = append(out, p[:i])
			}
			j := strings.IndexByte(p, ']')
			if j < i {
				out = append(out, p)
				break
			}
			out = append(out, p[i:j+1])
			p = p[j+1:]
		}
	}
	return out
}

// child returns the node of a field or list item and the line it is
// written on (a field's key line).
func child(n *yaml.Node, part string) (*yaml.Node, int) {
	switch {
	case n.Kind == yaml.SequenceNode && strings.HasPrefix(part, "["):
		i, err := strconv.Atoi(strings.Trim(part, "[]"))
		if err != nil || i < 0 || i >= len(n.Content) {
			return nil, 0
		}
		return n.Content[i], n.Content[i].Line
	case n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				return n.Content[i+1], n.Content[i].Line
			}
		}
	}
	return nil, 0
}

// ReadDocs reads every non-empty document of a YAML file.
func ReadDocs(fsys fs.FS, file string) ([]*Doc, error) {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, err
	}
	return ParseDocs(file, data)
}

// ParseDocs decodes every non-empty document of YAML data.
func ParseDocs(file string, data []byte) ([]*Doc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*Doc
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", file, err)
		}
		if len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
			continue
		}
		obj := map[string]any{}
		if err := n.Decode(&obj); err != nil {
			return out, fmt.Errorf("%s:%d: %w", file, n.Content[0].Line, err)
		}
		out = append(out, &Doc{File: file, Obj: obj, node: n.Content[0]})
	}
}

// Str returns the string at a path of nested maps, or "".
func Str(m map[string]any, path ...string) string {
	s, _ := Get(m, path...).(string)
	return s
}

// Map returns the map at a path of nested maps, or nil.
func Map(m map[string]any, path ...string) map[string]any {
	v, _ := Get(m, path...).(map[string]any)
	return v
}

// List returns the list at a path of nested maps, or nil.
func List(m map[string]any, path ...string) []any {
	v, _ := Get(m, path...).([]any)
	return v
}

// Get returns the value at a path of nested maps, or nil.
func Get(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}
