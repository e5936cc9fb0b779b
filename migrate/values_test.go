package migrate

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/spec"
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
		if got := Merge(c, Diff(m, c)); !reflect.DeepEqual(got, m) {
			t.Errorf("Common merged with Diff = %v, want %v", got, m)
		}
	}
	if d := Diff(a, a); len(d) != 0 {
		t.Errorf("Diff of a map with itself = %v", d)
	}
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

// An import never overwrites a file that is not a regatta document.
func TestWriteKeepsForeignFiles(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "clusters", "one", "cluster.yaml")
	if err := os.MkdirAll(filepath.Dir(foreign), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(foreign, []byte("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &Fleet{Clusters: []*spec.Cluster{{TypeMeta: spec.TypeMeta{APIVersion: spec.APIVersion, Kind: spec.KindCluster}, Metadata: spec.ObjectMeta{Name: "one"}}}}
	if _, err := f.Write(dir, "test"); !errors.Is(err, ErrForeignFile) {
		t.Fatalf("Write over a foreign file: %v, want ErrForeignFile", err)
	}
	if data, _ := os.ReadFile(foreign); !strings.Contains(string(data), "kind.x-k8s.io") {
		t.Error("the foreign file was changed")
	}
	if err := os.Remove(foreign); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a regatta document is rewritten
		if _, err := f.Write(dir, "test"); err != nil {
			t.Fatal(err)
		}
	}
}
