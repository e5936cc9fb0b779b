package app

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

const specTestdata = "../../../spec/testdata/"

func TestValidateExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{"valid", []string{"validate", specTestdata + "valid-full"}, 0, "", "2 clusters, 2 profiles, 2 classifiers: valid, 0 warnings"},
		{"invalid", []string{"validate", specTestdata + "invalid-graph"}, 1,
			"profiles/c.yaml:6: spec.dependsOn[0]: dependency cycle: a -> b -> c -> a\n", "invalid: 4 errors"},
		{"warnings only print", []string{"validate", specTestdata + "invalid-fields"}, 1,
			"warning: profiles/unmatched.yaml:5: spec.clusterSelector: selects no cluster\n", ""},
		{"unknown field with a block value: the key's line", []string{"validate", specTestdata + "invalid-unknown-fields"}, 1,
			"profiles/p.yaml:10: spec.eventTriger: unknown field \"eventTriger\"\n", "invalid: 19 errors"},
		{"missing dir", []string{"validate", "/nonexistent/fleet"}, 2, "", "no such file or directory"},
		{"two dirs", []string{"validate", "a", "b"}, 2, "", "at most one directory"},
		{"bad output", []string{"validate", "-o", "xml", specTestdata + "valid-full"}, 2, "", "--output must be text or json"},
		{"unknown flag", []string{"validate", "--frobnicate"}, 2, "", "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.inStdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.inStdout, stdout)
			}
			if !strings.Contains(stderr, tt.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.inStderr, stderr)
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	code, stdout, _ := run(t, "validate", "--output", "json", specTestdata+"invalid-graph")
	if code != 1 {
		t.Fatalf("exit code %d", code)
	}
	var r validateReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.Valid || r.Profiles != 4 || len(r.Errors) != 4 || r.Warnings == nil {
		t.Errorf("report = %+v", r)
	}
	first := r.Errors[0]
	if first.File != "profiles/c.yaml" || first.Line != 6 || first.Field != "spec.dependsOn[0]" {
		t.Errorf("first error = %+v", first)
	}
}

func TestValidateReadsEnvironment(t *testing.T) {
	t.Setenv("REGATTA_OUTPUT", "json")
	_, stdout, _ := run(t, "validate", specTestdata+"valid-full")
	if !strings.HasPrefix(stdout, "{") {
		t.Errorf("REGATTA_OUTPUT=json ignored:\n%s", stdout)
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := run(t, "version")
	if code != 0 || !strings.HasPrefix(stdout, "regatta dev (commit unknown") {
		t.Errorf("version: %d %q", code, stdout)
	}
}

func TestValidateExample(t *testing.T) {
	code, stdout, stderr := run(t, "validate", "../../../examples/fleet-infra")
	if code != 0 || stdout != "" {
		t.Errorf("examples/fleet-infra: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestValidateFindsTemplateBombsAndParseErrors: what can be checked
// without a cluster is: literal bombs and parse errors in templated
// fields and in a template: true add-on's files, with file and line.
func TestValidateFindsTemplateBombsAndParseErrors(t *testing.T) {
	dir := t.TempDir()
	profile := `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: creds}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: creds
    template: true
    manifests: {path: creds}
  - name: other
    manifests:
      path: 'creds{{ repeat 4000000000 "x" }}'
  - name: broken
    manifests:
      path: 'creds{{ if }}'
`
	writeFiles(t, dir, map[string]string{
		"clusters/c1/cluster.yaml": secretFleetCluster,
		"profiles/creds.yaml":      profile,
		"creds/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\ndata:\n  v: '{{ range 100000000000000 }}{{ end }}'\n",
	})
	code, stdout, _ := run(t, "validate", dir)
	for _, want := range []string{
		"creds/cm.yaml:5: template: template limit exceeded: range of 100000000000000 iterations",
		"profiles/creds.yaml:12: spec.addons[1].manifests.path: template: template limit exceeded: repeat would build",
		"profiles/creds.yaml:15: spec.addons[2].manifests.path: template: missing value for if",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if code != 1 {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// TestValidateParsesManifests: the files of plain manifests and Kustomize
// add-ons are parsed offline; a YAML syntax error is an error at its file
// and line (validate said "valid" and every cluster then failed to render).
func TestValidateParsesManifests(t *testing.T) {
	dir := t.TempDir()
	profile := `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: apps}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: plain
    manifests: {path: plain}
  - name: kust
    kustomize: {path: kust}
`
	writeFiles(t, dir, map[string]string{
		"clusters/c1/cluster.yaml": secretFleetCluster,
		"profiles/apps.yaml":       profile,
		"plain/ok.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n",
		"plain/bad.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n   namespace: x\n",
		"plain/nokind.yaml":        "apiVersion: v1\nmetadata: {name: c}\n",
		"kust/kustomization.yaml":  "resources: [cm.yaml]\n",
		"kust/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\ndata: {a: [1, 2}\n",
	})
	code, stdout, _ := run(t, "validate", dir)
	for _, want := range []string{
		"plain/bad.yaml:9: invalid YAML: ",
		"plain/nokind.yaml:1: document has no kind",
		"kust/cm.yaml:3: invalid YAML: ",
	} {
		if !strings.Contains(stdout, "\n"+want) && !strings.HasPrefix(stdout, want) {
			t.Errorf("output lacks the error %q", want)
		}
	}
	if code != 1 {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}
