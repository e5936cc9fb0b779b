package lua

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// healthCases is a folder's health_test.yaml, in Argo CD's layout.
type healthCases struct {
	Tests []struct {
		InputPath    string `json:"inputPath"`
		HealthStatus struct {
			Status  HealthCode `json:"status"`
			Message string     `json:"message"`
		} `json:"healthStatus"`
	} `json:"tests"`
}

// TestBuiltinHealth walks health/<group>/<Kind>/ and runs every case of
// every folder's health_test.yaml against its health.lua.
func TestBuiltinHealth(t *testing.T) {
	root := os.DirFS("health")
	scripts, err := fs.Glob(root, "*/*/health.lua")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no health scripts found: %v", err)
	}
	r := NewRunner(Options{})
	for _, script := range scripts {
		dir := path.Dir(script)
		t.Run(dir, func(t *testing.T) {
			group, kind := path.Split(dir)
			src := readFile(t, root, script)
			if got, ok := BuiltinHealth(strings.TrimSuffix(group, "/"), kind); !ok || got != src {
				t.Fatalf("BuiltinHealth(%q, %q) does not return %s", group, kind, script)
			}
			runHealthCases(t, r, root, dir, src)
		})
	}
	if len(BuiltinHealthKinds()) != len(scripts) {
		t.Errorf("BuiltinHealthKinds lists %d kinds, the tree has %d", len(BuiltinHealthKinds()), len(scripts))
	}
}

func runHealthCases(t *testing.T, r *Runner, root fs.FS, dir, src string) {
	var cases healthCases
	if err := yaml.UnmarshalStrict([]byte(readFile(t, root, dir+"/health_test.yaml")), &cases); err != nil {
		t.Fatalf("health_test.yaml: %v", err)
	}
	inputs, _ := fs.Glob(root, dir+"/testdata/*.yaml")
	used := map[string]bool{}
	for _, tc := range cases.Tests {
		used[dir+"/"+tc.InputPath] = true
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(readFile(t, root, dir+"/"+tc.InputPath)), &obj); err != nil {
			t.Fatalf("%s: %v", tc.InputPath, err)
		}
		checkGroupKind(t, dir, tc.InputPath, obj)
		got, err := r.Health(t.Context(), Script{Name: dir + "/health.lua", Source: src}, obj)
		want := HealthStatus{Status: tc.HealthStatus.Status, Message: tc.HealthStatus.Message}
		if err != nil || got != want {
			t.Errorf("%s:\n got %+v %v\nwant %+v", tc.InputPath, got, err, want)
		}
	}
	for _, in := range inputs {
		if !used[in] {
			t.Errorf("%s is used by no case", in)
		}
	}
	if len(cases.Tests) < 3 {
		t.Errorf("only %d cases", len(cases.Tests))
	}
}

// checkGroupKind makes sure a test input is an object of the folder's kind.
func checkGroupKind(t *testing.T, dir, input string, obj map[string]any) {
	group, kind := path.Split(dir)
	apiVersion, _ := obj["apiVersion"].(string)
	wantGroup := strings.TrimSuffix(group, "/")
	gotGroup, _, hasGroup := strings.Cut(apiVersion, "/")
	if !hasGroup {
		gotGroup = "core"
	}
	if gotGroup != wantGroup || obj["kind"] != kind {
		t.Errorf("%s is a %v %v, not a %s", input, apiVersion, obj["kind"], dir)
	}
}

func readFile(t *testing.T, root fs.FS, name string) string {
	t.Helper()
	b, err := fs.ReadFile(root, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuiltinHealthLookup(t *testing.T) {
	if _, ok := BuiltinHealth("", "PersistentVolumeClaim"); !ok {
		t.Error("core kinds are not found under the empty group")
	}
	if _, ok := BuiltinHealth("core", "PersistentVolumeClaim"); !ok {
		t.Error(`core kinds are not found under "core"`)
	}
	for _, gk := range [][2]string{{"apps", "Deployment"}, {"", ""}, {"..", "health.lua"}, {"cert-manager.io/../core", "PersistentVolumeClaim"}} {
		if _, ok := BuiltinHealth(gk[0], gk[1]); ok {
			t.Errorf("BuiltinHealth(%q, %q) found a script", gk[0], gk[1])
		}
	}
	kinds := BuiltinHealthKinds()
	if !slices.Contains(kinds, GroupKind{Group: "cert-manager.io", Kind: "Certificate"}) ||
		!slices.Contains(kinds, GroupKind{Kind: "PersistentVolumeClaim"}) {
		t.Errorf("kinds %v", kinds)
	}
}
