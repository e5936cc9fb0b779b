package render

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/spec"
)

// TestKustomizeNestedErrors: an error deep in a base names each level
// once, without kustomize's "read <path>: is a directory" attempt (which
// names the host path on an os.DirFS) or its "must build at directory".
func TestKustomizeNestedErrors(t *testing.T) {
	files := map[string]string{
		"k/overlay/kustomization.yaml": "resources: [../base]\n",
		"k/base/kustomization.yaml":    "resources: [../inner]\n",
		"k/inner/kustomization.yaml":   "resources: [missing.yaml, cm.yaml]\n",
		"k/inner/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
	}
	want := "kustomize: resource '../base' (folder k/base): resource '../inner' (folder k/inner): resource 'missing.yaml': k/inner/missing.yaml does not exist"
	a := spec.Addon{Name: "k", Kustomize: &spec.KustomizeSource{Path: "k/overlay"}}
	t.Run("git tree", func(t *testing.T) {
		_, err := adhoc(t, Options{}, files, a)
		assertError(t, err, "plain", "addon k: k/inner/kustomization.yaml:1: "+want, "k/inner/kustomization.yaml", 1)
	})
	t.Run("host folder", func(t *testing.T) {
		dir := t.TempDir()
		mem := memRepo(t)
		for p, data := range files {
			mem[p] = &fstest.MapFile{Data: []byte(data)}
		}
		for p, f := range mem {
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, p), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fsys := os.DirFS(dir)
		prof := withSource(loadProfile(t, fsys, "plain"), a)
		_, err := New(Options{}).Render(context.Background(), Request{FS: fsys.(fs.FS), Profile: prof, Cluster: prodCluster()})
		assertError(t, err, "plain", "addon k: k/inner/kustomization.yaml:1: "+want, "k/inner/kustomization.yaml", 1)
		if strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "is a directory") {
			t.Fatalf("error names the host folder: %v", err)
		}
	})
}

// TestKustomizeYAMLErrors: a syntax error in a file kustomize reads is
// placed at that file and its real line, not kustomize's "line 3" of the
// enclosing block or no line at all for a control character.
func TestKustomizeYAMLErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"a\x01\"}\n", "addon k: k/cm.yaml:3: invalid YAML: column 20: control character U+0001"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    a: b\n   c: d\n", "addon k: k/cm.yaml:7: invalid YAML: did not find expected key"},
	} {
		files := map[string]string{"k/kustomization.yaml": "resources: [cm.yaml]\n", "k/cm.yaml": c.data}
		_, err := adhoc(t, Options{}, files, spec.Addon{Name: "k", Kustomize: &spec.KustomizeSource{Path: "k"}})
		assertError(t, err, "plain", c.want, "k/cm.yaml", map[bool]int{true: 3, false: 7}[strings.Contains(c.data, "\x01")])
	}
}

// TestKustomizePlacesFailedEntries: a missing base is placed at the
// kustomization file and the line of its resources entry (it was placed
// at the folder, without a line), and a generator with behavior merge and
// nothing to merge into at its own entry, with a message in words (it
// printed kustomize's Go values).
func TestKustomizePlacesFailedEntries(t *testing.T) {
	a := spec.Addon{Name: "k", Kustomize: &spec.KustomizeSource{Path: "k/overlay"}}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
	for name, tc := range map[string]struct {
		files     map[string]string
		msg, file string
		line      int
	}{
		"missing base": {map[string]string{"k/overlay/kustomization.yaml": "resources:\n- cm.yaml\n- ../../base\n", "k/overlay/cm.yaml": cm},
			"kustomize: resource '../../base': base does not exist", "k/overlay/kustomization.yaml", 3},
		"missing base of a base": {map[string]string{"k/overlay/kustomization.yaml": "resources: [../base]\n", "k/base/kustomization.yaml": "resources:\n  - ../gone\n"},
			"kustomize: resource '../base' (folder k/base): resource '../gone': k/gone does not exist", "k/base/kustomization.yaml", 2},
		"merge without base": {map[string]string{"k/overlay/kustomization.yaml": "resources: [cm.yaml]\ngeneratorOptions:\n  labels: {a: b}\nconfigMapGenerator:\n- name: other\n  literals: [a=b]\n- name: extra\n  behavior: merge\n  literals: [a=b]\n", "k/overlay/cm.yaml": cm},
			"kustomize: generator ConfigMap extra has behavior merge or replace, but no ConfigMap extra comes from the resources to merge into", "k/overlay/kustomization.yaml", 7},
		"merge without base in a base": {map[string]string{"k/overlay/kustomization.yaml": "resources: [../base]\n", "k/base/kustomization.yaml": "generatorOptions:\n  labels: {a: b}\nconfigMapGenerator:\n- name: extra\n  behavior: merge\n  literals: [a=b]\n"},
			"kustomize: resource '../base' (folder k/base): generator ConfigMap extra has behavior merge or replace, but no ConfigMap extra comes from the resources to merge into", "k/base/kustomization.yaml", 4},
		"merge with a missing env file": {map[string]string{"k/overlay/kustomization.yaml": "resources: [../base]\ngeneratorOptions:\n  disableNameSuffixHash: true\nconfigMapGenerator:\n- name: cfg\n  behavior: merge\n  envs: [missing.env]\n", "k/base/kustomization.yaml": "configMapGenerator:\n- name: cfg\n  literals: [a=b]\n"},
			"kustomize: loading KV pairs: env source files: [missing.env]: open k/overlay/missing.env: file does not exist", "k/overlay/kustomization.yaml", 5},
		"missing patch file": {map[string]string{"k/overlay/kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: nope.yaml\n", "k/overlay/cm.yaml": cm},
			"kustomize: failed to get the patch file from path(nope.yaml): open k/overlay/nope.yaml: file does not exist", "k/overlay/kustomization.yaml", 3},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := adhoc(t, Options{}, tc.files, a)
			assertError(t, err, "plain", fmt.Sprintf("addon k: %s:%d: %s", tc.file, tc.line, tc.msg), tc.file, tc.line)
		})
	}
}
