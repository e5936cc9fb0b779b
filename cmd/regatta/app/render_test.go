package app

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/render"
)

const example = "../../../examples/fleet-infra"

func TestRenderExampleProfile(t *testing.T) {
	code, stdout, stderr := run(t, "render", "--cluster", "staging-1", "--profile", "apps", example)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"# profile: apps, add-on: podinfo, source: apps/base/deployment.yaml",
		"greeting: hello from staging-1",
		"PODINFO_UI_MESSAGE: hello from staging",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Index(stdout, "add-on: podinfo") > strings.Index(stdout, "add-on: settings") {
		t.Error("add-ons out of order")
	}
}

func TestRenderVersionClassifiers(t *testing.T) {
	for version, profile := range map[string]string{"v1.36.3": "compat-v1-36", "v1.37.2": "compat-v1-37"} {
		code, stdout, stderr := run(t, "render", "--cluster", "staging-1", "--profile", profile, "--kubernetes-version", version, example)
		if code != 0 || !strings.Contains(stdout, "profile: "+profile) {
			t.Errorf("%s: exit %d %s\n%s", version, code, stderr, stdout)
		}
	}
	code, _, stderr := run(t, "render", "--cluster", "staging-1", "--profile", "compat-v1-36", "--kubernetes-version", "v1.37.2", example)
	if code != 1 || !strings.Contains(stderr, "profile compat-v1-36 does not select cluster staging-1") {
		t.Errorf("non-matching profile: exit %d %s", code, stderr)
	}
}

func TestRenderUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"render", example}, 2, "--cluster is required"},
		{[]string{"render", "--cluster", "ghost", example}, 1, `cluster "ghost" is not in clusters/`},
		{[]string{"render", "--cluster", "staging-1", "--profile", "ghost", example}, 1, `profile "ghost" is not in profiles/`},
		{[]string{"render", "--cluster", "c1", specTestdata + "invalid-graph"}, 1, "the repository is invalid: 4 errors"},
		{[]string{"render", "--cluster", "c1", "--revision", "HEAD", t.TempDir()}, 2, ""},
	}
	for _, tt := range tests {
		code, _, stderr := run(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.msg) {
			t.Errorf("%v: exit %d, want %d; stderr:\n%s", tt.args, code, tt.code, stderr)
		}
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const secretFleetCluster = `apiVersion: regatta.dev/v1alpha1
kind: Cluster
metadata: {name: c1, labels: {env: prod}}
spec: {}
`

const secretFleetProfile = `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: creds}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: creds
    manifests: {path: creds}
`

func TestRenderRedactsSecretsAndReadsRevisions(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/c1/cluster.yaml": secretFleetCluster,
		"profiles/creds.yaml":      secretFleetProfile,
		"creds/secret.yaml":        "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: default}\ndata: {password: aHVudGVyMg==}\nstringData: {token: plain-token-value}\n",
	})
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "v1")
	writeFiles(t, dir, map[string]string{"creds/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: db2, namespace: default}\n"})

	_, stdout, _ := run(t, "render", "--cluster", "c1", "--revision", "HEAD", dir)
	if strings.Contains(stdout, "aHVudGVyMg") || strings.Contains(stdout, "plain-token-value") || !strings.Contains(stdout, "password: <redacted>") {
		t.Errorf("secret not redacted:\n%s", stdout)
	}
	if !strings.Contains(stdout, "name: db\n") {
		t.Errorf("--revision HEAD did not read the commit:\n%s", stdout)
	}
	_, stdout, _ = run(t, "render", "--cluster", "c1", "--revision", "HEAD", "--show-secrets", dir)
	if !strings.Contains(stdout, "aHVudGVyMg==") {
		t.Errorf("--show-secrets hid the value:\n%s", stdout)
	}
	_, stdout, _ = run(t, "render", "--cluster", "c1", dir)
	if !strings.Contains(stdout, "name: db2") {
		t.Errorf("working tree not read:\n%s", stdout)
	}
}

// TestRenderRedactsACopy: the render cache shares its objects with every
// caller, so redaction must leave the cached Secret as it was.
func TestRenderRedactsACopy(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/c1/cluster.yaml": secretFleetCluster,
		"profiles/creds.yaml":      secretFleetProfile,
		"creds/secret.yaml":        "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: default}\ndata: {password: aHVudGVyMg==}\nstringData: {token: plain-token-value}\n",
	})
	tree, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := loadValid(tree, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r := render.New(render.Options{})
	req := render.Request{FS: tree, Revision: "r1", Profile: fleet.Profile("creds"),
		Cluster: offlineFacts(fleet, fleet.Cluster("c1"), nil, DefaultKubernetesVersion, io.Discard)}
	if _, err := r.Render(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	res, err := r.Render(context.Background(), req) // a hit: the cached objects the next hit shares
	if err != nil {
		t.Fatal(err)
	}
	want := res.DeepCopy()
	var out strings.Builder
	if err := writeRendered(&out, res, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "plain-token-value") || !strings.Contains(out.String(), "token: <redacted>") {
		t.Fatalf("not redacted:\n%s", out.String())
	}
	again, err := r.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Steps[0].Objects[0].Unstructured != res.Steps[0].Objects[0].Unstructured {
		t.Fatal("not a cache hit: the test proves nothing")
	}
	if !reflect.DeepEqual(again.Steps[0].Objects[0].Object, want.Steps[0].Objects[0].Object) {
		t.Errorf("redaction changed the cached Secret: %v", again.Steps[0].Objects[0].Object)
	}
}

func TestRenderFailureNamesFileAndKey(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/c1/cluster.yaml": secretFleetCluster,
		"profiles/creds.yaml":      strings.Replace(secretFleetProfile, "  - name: creds\n", "  - name: creds\n    template: true\n", 1),
		"creds/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\ndata:\n  region: \"{{ .Cluster.Values.region }}\"\n",
	})
	code, _, stderr := run(t, "render", "--cluster", "c1", dir)
	if code != 1 || !strings.Contains(stderr, "creds/cm.yaml:5") || !strings.Contains(stderr, "region") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
}

// TestRenderTemplateBombFails: a template that would loop for ever or
// allocate gigabytes fails with its file and line, literal (refused before
// running) or computed (stopped by the execution limits), in a file or in
// a templated path.
func TestRenderTemplateBombFails(t *testing.T) {
	for name, bomb := range map[string]string{
		"literal loop":    `{{ range 100000000000000 }}{{ end }}`,
		"computed loop":   `{{ range (int "100000000000000") }}{{ end }}`,
		"computed until":  `{{ len (until (int "2000000000")) }}`,
		"computed repeat": `{{ repeat (int "4000000000") "x" }}`,
	} {
		for _, where := range []string{"file", "path"} {
			dir := t.TempDir()
			profile := strings.Replace(secretFleetProfile, "  - name: creds\n", "  - name: creds\n    template: true\n", 1)
			cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\ndata:\n  v: '" + bomb + "'\n"
			wantAt := "creds/cm.yaml:5"
			if where == "path" {
				profile = strings.Replace(secretFleetProfile, "{path: creds}", "{path: 'creds"+bomb+"'}", 1)
				cm, wantAt = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n", "profiles/creds.yaml:8"
			}
			writeFiles(t, dir, map[string]string{
				"clusters/c1/cluster.yaml": secretFleetCluster,
				"profiles/creds.yaml":      profile,
				"creds/cm.yaml":            cm,
			})
			code, _, stderr := run(t, "render", "--cluster", "c1", dir)
			if code != 1 || !strings.Contains(stderr, wantAt) || !strings.Contains(stderr, "template limit exceeded") {
				t.Errorf("%s in a %s: exit %d:\n%s", name, where, code, stderr)
			}
		}
	}
}

// TestRenderEventResource renders an event profile offline: one instance
// per resource of --event-resource its event source selects.
func TestRenderEventResource(t *testing.T) {
	code, stdout, stderr := run(t, "render", "--cluster", "staging-1", "--profile", "https-netpol",
		"--event-resource", "testdata/event-services.yaml", example)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"# event instance: web-", "(Service/eng/web on staging-1)", "name: https-web-", "port: 443"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "plain") {
		t.Errorf("the Service without 443 got an instance:\n%s", stdout)
	}
	code, stdout, stderr = run(t, "render", "--cluster", "staging-1", "--profile", "https-netpol", example)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "no instance rendered") {
		t.Errorf("without resources: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
