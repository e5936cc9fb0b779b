package render

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/render/sandbox"
	"github.com/regatta-dev/regatta/spec"
)

// TestMain lets the test binary serve as the sandbox worker.
func TestMain(m *testing.M) {
	if os.Getenv(sandbox.WorkerEnv) != "" {
		if err := sandbox.Serve(os.Stdin, os.Stdout, WorkerHandlers(), time.Minute); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testSandbox is a pool of this test binary's workers.
func testSandbox(t *testing.T, o sandbox.Options) *sandbox.Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o.Command, o.Env = []string{exe}, []string{sandbox.WorkerEnv + "=1"}
	p := sandbox.New(o)
	t.Cleanup(p.Close)
	return p
}

const jsonnetLib = `{
  configMap(name, data):: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: name }, data: data },
}
`

// jsonnetFiles is a platform repository with a Jsonnet add-on whose
// library sits in a jsonnet-bundler vendor folder.
func jsonnetFiles(main string) map[string]string {
	return map[string]string{
		"profiles/jp.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: jp}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: mon\n" +
			"    jsonnet: {path: mon/main.jsonnet, jpath: [mon/vendor], extVars: {team: obs}, tlaCode: {replicas: '2'}}\n",
		"mon/vendor/github.com/acme/k/k.libsonnet": jsonnetLib,
		"mon/vendor/k":     "->github.com/acme/k",
		"mon/main.jsonnet": main,
	}
}

func renderJsonnetTree(t *testing.T, r *Renderer, dir string, c ClusterFacts) (*Result, error) {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	repo, diags := spec.Load(root.FS())
	p := repo.Profile("jp")
	if p == nil {
		p = repo.Profile("tp")
	}
	if p == nil {
		t.Fatalf("profile not loaded: %v", diags)
	}
	return r.Render(context.Background(), Request{FS: root.FS(), Profile: p, Cluster: c})
}

const clusterMain = `local k = import 'k/k.libsonnet';
local r = std.extVar('regatta');
function(replicas) [
  k.configMap('facts', { env: r.cluster.labels.env, team: std.extVar('team'), replicas: std.toString(replicas) }),
]
`

// TestJsonnetAddonSeesTheCluster renders a Jsonnet add-on for two
// clusters: the program reads the cluster's labels, its external
// variables, top-level arguments and a vendored library.
func TestJsonnetAddonSeesTheCluster(t *testing.T) {
	dir := tenantTree(t, jsonnetFiles(clusterMain))
	r := New(Options{})
	for _, env := range []string{"prod", "staging"} {
		c := prodCluster()
		c.Labels = map[string]string{"env": env}
		res, err := renderJsonnetTree(t, r, dir, c)
		if err != nil {
			t.Fatal(err)
		}
		objs := res.Objects()
		if len(objs) != 1 || objs[0].Source != "mon/main.jsonnet" {
			t.Fatalf("objects: %v", objs)
		}
		data, _, _ := unstructuredStrings(objs[0].Object, "data")
		if data["env"] != env || data["team"] != "obs" || data["replicas"] != "2" {
			t.Fatalf("%s: data %v", env, data)
		}
	}
}

func unstructuredStrings(obj map[string]any, field string) (map[string]string, bool, error) {
	m, ok := obj[field].(map[string]any)
	out := map[string]string{}
	for k, v := range m {
		out[k], _ = v.(string)
	}
	return out, ok, nil
}

// TestJsonnetKeyHoldsWhatItReads: a render is reused for a cluster that
// differs only in data the program did not read, and redone when what it
// read changes: a label, a library file, or a file appearing where an
// import looked first.
func TestJsonnetKeyHoldsWhatItReads(t *testing.T) {
	dir := tenantTree(t, jsonnetFiles(clusterMain))
	r := New(Options{})
	render := func(c ClusterFacts) string {
		res, err := renderJsonnetTree(t, r, dir, c)
		if err != nil {
			t.Fatal(err)
		}
		return dump(t, res)
	}
	a := prodCluster()
	first := render(a)
	b := a
	b.Name, b.Values, b.KubernetesVersion = "other", map[string]any{"x": 1}, "v1.30.0"
	render(b)
	if hits, misses := r.CacheStats(); hits != 1 || misses != 1 {
		t.Fatalf("a cluster differing in unread data: hits %d misses %d, want 1 1", hits, misses)
	}
	c := a
	c.Labels = map[string]string{"env": "dev"}
	render(c)
	if _, misses := r.CacheStats(); misses != 2 {
		t.Fatalf("other labels: misses %d, want 2", misses)
	}
	write := func(p, body string) {
		if err := os.WriteFile(dir+"/"+p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mon/vendor/github.com/acme/k/k.libsonnet", strings.Replace(jsonnetLib, "'ConfigMap', metadata: { name: name }", "'ConfigMap', metadata: { name: name + '-v2' }", 1))
	if got := render(a); got == first || !strings.Contains(got, "facts-v2") {
		t.Fatalf("a library change was not seen:\n%s", got)
	}
	if err := os.MkdirAll(dir+"/mon/k", 0o755); err != nil {
		t.Fatal(err)
	}
	write("mon/k/k.libsonnet", strings.Replace(jsonnetLib, "name: name }", "name: name + '-local' }", 1))
	if got := render(a); !strings.Contains(got, "facts-local") {
		t.Fatalf("a file shadowing the library was not seen:\n%s", got)
	}
}

// TestJsonnetErrorsArePlaced: failures name file:line:column, in the
// library when the failure is there.
func TestJsonnetErrorsArePlaced(t *testing.T) {
	tests := map[string]struct{ main, lib, want string }{
		"runtime error in a library": {
			main: "(import 'k/k.libsonnet').configMap('x', {})",
			lib:  "{\n  configMap(name, data):: error 'no config for ' + name,\n}\n",
			want: "mon/vendor/k/k.libsonnet:2:27: jsonnet: RUNTIME ERROR: no config for x",
		},
		"syntax error": {
			main: "{ a: }\n",
			want: `mon/main.jsonnet:1:6: jsonnet: Unexpected: "}" while parsing terminal`,
		},
		"missing import": {
			main: "import 'nope.libsonnet'\n",
			want: "mon/main.jsonnet:1:1: jsonnet: RUNTIME ERROR: couldn't open import \"nope.libsonnet\"",
		},
		"not a manifest": {
			main: "[{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }, 'text']",
			want: "mon/main.jsonnet: jsonnet: output[1]: a string is not a manifest",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			files := jsonnetFiles(tc.main)
			if tc.lib != "" {
				files["mon/vendor/github.com/acme/k/k.libsonnet"] = tc.lib
			}
			_, err := renderJsonnetTree(t, New(Options{}), tenantTree(t, files), prodCluster())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestJsonnetImportsStayInside: an import leaving the repository, or a
// tenant's folder (by path or by symlink), fails with the reason and
// shows nothing of what is outside.
func TestJsonnetImportsStayInside(t *testing.T) {
	tests := map[string]struct {
		files map[string]string
		want  string
	}{
		"above the repository": {
			files: jsonnetFiles("importstr '../../../../etc/hostname'"),
			want:  "leaves the repository",
		},
		"absolute": {
			files: jsonnetFiles("importstr '/etc/hostname'"),
			want:  "absolute path leaves the repository",
		},
		"tenant path": {
			files: map[string]string{
				"tenants/t/profiles/tp.yaml": tenantProfile("    jsonnet: {path: tenants/t/app/main.jsonnet}\n"),
				"tenants/t/app/main.jsonnet": "std.parseYaml(importstr '../../../platform/secret.yaml')",
			},
			want: "platform/secret.yaml: path leaves the tenant's folder",
		},
		"tenant symlink": {
			files: map[string]string{
				"tenants/t/profiles/tp.yaml": tenantProfile("    jsonnet: {path: tenants/t/app/main.jsonnet, jpath: [tenants/t/lib]}\n"),
				"tenants/t/app/main.jsonnet": "std.parseYaml(importstr 'secret.yaml')",
				"tenants/t/lib":              "->../../platform",
			},
			want: "path leaves the tenant's folder",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) { wantRenderError(t, tc.files, tc.want) })
	}
}

// wantRenderError renders files' profile for prod and wants an error
// containing want that shows nothing of the platform's secret.
func wantRenderError(t *testing.T, files map[string]string, want string) {
	t.Helper()
	_, err := renderJsonnetTree(t, New(Options{}), tenantTree(t, files), prodCluster())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	if strings.Contains(err.Error(), "platform-secret") {
		t.Fatalf("the error shows what is outside: %v", err)
	}
}

// TestJsonnetBombsFailAlone: a program that loops, recurses without end
// or allocates without bound fails its add-on within the sandbox's
// limits, with a message saying which; the worker pool serves the next
// render.
func TestJsonnetBombsFailAlone(t *testing.T) {
	r := New(Options{Sandbox: testSandbox(t, sandbox.Options{Timeout: 3 * time.Second, MaxMemory: 256 << 20})})
	// A loop allocates as it goes: given memory, it meets the deadline.
	slow := New(Options{Sandbox: testSandbox(t, sandbox.Options{Timeout: 500 * time.Millisecond, MaxMemory: 1 << 30})})
	// Given time, an allocation meets the memory bound (on a loaded
	// runner it could meet a short deadline first).
	hungry := New(Options{Sandbox: testSandbox(t, sandbox.Options{Timeout: 2 * time.Minute, MaxMemory: 256 << 20})})
	tests := map[string]struct{ main, want string }{
		"loop": {
			main: "local f(n) = if n < 0 then 0 else f(n + 1) tailstrict; f(0)",
			want: "ran longer than 500ms",
		},
		"recursion": {
			main: "local f(n) = 1 + f(n + 1); f(0)",
			want: "max stack frames exceeded",
		},
		"memory": {
			main: "std.length(std.makeArray(400000000, function(i) i))",
			want: "memory",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rr := map[string]*Renderer{"loop": slow, "memory": hungry}[name]
			if rr == nil {
				rr = r
			}
			_, err := renderJsonnetTree(t, rr, tenantTree(t, jsonnetFiles(tc.main)), prodCluster())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "mon/main.jsonnet") {
				t.Fatalf("error %v\nwant %s", err, tc.want)
			}
			if name != "recursion" && !errors.Is(err, ErrTemplateLimit) {
				t.Errorf("not a limit error: %v", err)
			}
		})
	}
	res, err := renderJsonnetTree(t, r, tenantTree(t, jsonnetFiles(clusterMain)), prodCluster())
	if err != nil || len(res.Objects()) != 1 {
		t.Fatalf("the next render: %v", err)
	}
}

// TestJsonnetPathTemplatedAndOverlaid: the main file may be templated
// from the cluster's data, and an overlay's path replaces it for the
// clusters it selects.
func TestJsonnetPathTemplatedAndOverlaid(t *testing.T) {
	cm := func(name string) string {
		return "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '" + name + "' } }\n"
	}
	files := map[string]string{
		"profiles/jp.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: jp}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: mon\n" +
			"    jsonnet: {path: 'mon/{{ .Cluster.Labels.env }}.jsonnet'}\n" +
			"  overlays:\n  - clusterSelector: {matchLabels: {region: us}}\n    addon: mon\n    path: mon/us.jsonnet\n",
		"mon/prod.jsonnet":    cm("prod"),
		"mon/staging.jsonnet": cm("staging"),
		"mon/us.jsonnet":      cm("us"),
	}
	dir := tenantTree(t, files)
	r := New(Options{})
	for _, tc := range []struct{ env, region, want string }{
		{"prod", "eu", "prod"}, {"staging", "eu", "staging"}, {"prod", "us", "us"},
	} {
		c := prodCluster()
		c.Labels = map[string]string{"env": tc.env, "region": tc.region}
		res, err := renderJsonnetTree(t, r, dir, c)
		if err != nil {
			t.Fatal(err)
		}
		if objs := res.Objects(); len(objs) != 1 || objs[0].GetName() != tc.want {
			t.Errorf("%s/%s: %v, want %s", tc.env, tc.region, objs, tc.want)
		}
	}
}
