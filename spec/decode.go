package spec

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// decoder turns a YAML node tree into a Go value strictly: unknown fields,
// duplicate keys and wrong types are reported with their line and field
// path, and every field's line is recorded for later validation messages.
type decoder struct {
	rep   report
	lines map[string]int
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if path != "" {
		d.line(path, n.Line)
	}
	if isNull(n) {
		return
	}
	if u, ok := scalarOf(v); ok {
		if msg := u.decodeScalar(n); msg != "" {
			d.typeErr(n, path, msg)
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), path)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	case reflect.Interface:
		var x any
		if err := n.Decode(&x); err != nil {
			d.valueErr(n, path, err)
			return
		}
		v.Set(reflect.ValueOf(normalize(x)))
	default:
		d.decodeScalar(n, v, path)
	}
}

// line records the line of a field path unless it has one: the key's line
// for a field of a mapping (keys records it first, so a block value such as
// a selector is placed at its key, not its first line), else the value's.
func (d *decoder) line(path string, l int) {
	if _, ok := d.lines[path]; !ok {
		d.lines[path] = l
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func (d *decoder) typeErr(n *yaml.Node, path, want string) {
	d.lines[path] = n.Line
	d.rep.errorf(path, "expected %s, got %s", want, describe(n))
}

// valueErr reports a free-form value YAML could not decode: an alias bomb
// (at its first alias) or a wrong type.
func (d *decoder) valueErr(n *yaml.Node, path string, err error) {
	if !strings.Contains(err.Error(), "excessive aliasing") {
		d.typeErr(n, path, "a value")
		return
	}
	d.lines[path] = max(firstAlias(n), n.Line)
	d.rep.errorf(path, "YAML aliases expand to too much data (an alias bomb?): expand the anchors you need and remove the others")
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%s %q", strings.TrimPrefix(n.ShortTag(), "!!"), n.Value)
}

// keys walks a mapping node, reporting duplicate keys, and calls fn for each
// unique key with its key and value nodes.
func (d *decoder) keys(n *yaml.Node, path string, fn func(k, val *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if first, dup := seen[k.Value]; dup {
			d.lines[join(path, k.Value)] = k.Line
			d.rep.errorf(join(path, k.Value), "duplicate key (first defined on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		d.lines[join(path, k.Value)] = k.Line
		fn(k, val)
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.typeErr(n, path, "a mapping")
		return
	}
	fields := structFields(v.Type())
	d.keys(n, path, func(k, val *yaml.Node) {
		idx, ok := fields[k.Value]
		if !ok { // placed at the key's line by keys
			d.rep.errorf(join(path, k.Value), "unknown field %q", k.Value)
			return
		}
		d.decode(val, v.FieldByIndex(idx), join(path, k.Value))
	})
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.typeErr(n, path, "a mapping")
		return
	}
	if v.Type().Elem().Kind() == reflect.Interface && firstAlias(n) != 0 {
		var x any // an alias bomb is reported once, for the whole map
		if err := n.Decode(&x); err != nil {
			d.valueErr(n, path, err)
			return
		}
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	d.keys(n, path, func(k, val *yaml.Node) {
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, elem, join(path, k.Value))
		v.SetMapIndex(reflect.ValueOf(k.Value), elem)
	})
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.typeErr(n, path, "a list")
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decode(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.typeErr(n, path, "a "+v.Kind().String())
		return
	}
	switch v.Kind() {
	case reflect.String:
		if n.Tag != "!!str" {
			d.typeErr(n, path, "a string (quote it)")
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		if n.Tag != "!!bool" {
			d.typeErr(n, path, "true or false")
			return
		}
		b, _ := strconv.ParseBool(n.Value)
		v.SetBool(b)
	case reflect.Int:
		i, err := strconv.Atoi(n.Value)
		if n.Tag != "!!int" || err != nil {
			d.typeErr(n, path, "an integer")
			return
		}
		v.SetInt(int64(i))
	default:
		d.rep.errorf(path, "unsupported field type %s", v.Type())
	}
}

// structFields maps YAML names to field indexes, descending into inline fields.
func structFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts == "inline" {
			for k, idx := range structFields(f.Type) {
				out[k] = append([]int{i}, idx...)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name[:1]) + f.Name[1:]
		}
		out[name] = []int{i}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// normalize turns YAML-decoded free-form data into JSON-compatible values:
// map[string]any, []any, string, bool, int64/float64 and nil.
func normalize(x any) any {
	switch t := x.(type) {
	case map[string]any:
		for k, v := range t {
			t[k] = normalize(v)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, v := range t {
			m[fmt.Sprint(k)] = normalize(v)
		}
		return m
	case []any:
		for i, v := range t {
			t[i] = normalize(v)
		}
		return t
	case int:
		return int64(t)
	}
	return x
}
