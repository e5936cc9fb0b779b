package migrate

import (
	"reflect"
	"testing"
)

// Common keeps what all maps share; Diff over Common gives each map back.
func TestCommonDiff(t *testing.T) {
	a := map[string]any{"x": 1, "m": map[string]any{"p": 1, "q": 2}, "l": []any{1}, "only": "a"}
	b := map[string]any{"x": 1, "m": map[string]any{"p": 1, "q": 3}, "l": []any{2}}
	c := Common([]map[string]any{a, b})
	want := map[string]any{"x": 1, "m": map[string]any{"p": 1}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("Common = %v, want %v", c, want)
	}
	for _, m := range []map[string]any{a, b} {
		if got := merge(c, Diff(m, c)); !reflect.DeepEqual(got, m) {
			t.Errorf("Common merged with Diff = %v, want %v", got, m)
		}
	}
	if d := Diff(a, a); len(d) != 0 {
		t.Errorf("Diff of a map with itself = %v", d)
	}
}

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		am, ok1 := out[k].(map[string]any)
		bm, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = merge(am, bm)
		} else {
			out[k] = v
		}
	}
	return out
}

// Doc.Line finds the line of nested fields and list items, falling back
// to the closest field that exists.
func TestDocLine(t *testing.T) {
	docs, err := ParseDocs("f.yaml", []byte("a: 1\n---\nkind: X\nspec:\n  list:\n  - name: one\n  - name: two\n    deep: {k: v}\n"))
	if err != nil || len(docs) != 2 {
		t.Fatalf("docs %d, err %v", len(docs), err)
	}
	d := docs[1]
	for field, want := range map[string]int{
		"":                   3,
		"spec":               4,
		"spec.list[1]":       7,
		"spec.list[1].deep":  8,
		"spec.list[5].name":  5,
		"spec.missing.field": 4,
	} {
		if got := d.Line(field); got != want {
			t.Errorf("Line(%q) = %d, want %d", field, got, want)
		}
	}
	if _, err := ParseDocs("bad.yaml", []byte("a: [\n")); err == nil {
		t.Error("invalid YAML parsed")
	}
}
