package app

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/internal/chartserver"
	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/render/sops"
)

var updateImport = flag.Bool("update-import", false, "rewrite the import reports in testdata/import (never the expected objects, which are written by hand)")

const importTestdata = "testdata/import"

// placeholders turns the test servers' addresses back into the
// placeholders of the source repositories (set by sourceRepo).
var placeholders = strings.NewReplacer()

// charts serves the test charts: webapp from a chart repository, the
// others from an OCI registry, in several versions so that version
// ranges have something to choose from.
type charts struct {
	repo *chartserver.Repo
	oci  *chartserver.OCI
}

func serveCharts(t *testing.T) charts {
	c := charts{repo: chartserver.NewRepo(t), oci: chartserver.NewOCI(t)}
	dir := filepath.Join(importTestdata, "charts")
	for _, v := range []string{"0.9.0", "1.0.0", "1.1.0-alpha.1"} {
		c.repo.Add(t, chartserver.Package(t, filepath.Join(dir, "webapp"), v))
	}
	for _, v := range []string{"1.4.0", "1.5.0", "2.0.0"} {
		c.oci.Push(t, "charts/controller", chartserver.Package(t, filepath.Join(dir, "controller"), v))
	}
	for _, v := range []string{"1.7.0", "1.8.0-rc.1"} {
		c.oci.Push(t, "charts/gateway", chartserver.Package(t, filepath.Join(dir, "gateway"), v))
	}
	return c
}

// sourceRepo copies a test repository and points its chart sources at
// the test servers.
func sourceRepo(t *testing.T, name string, c charts) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "src")
	must(t, os.CopyFS(dst, os.DirFS(filepath.Join(importTestdata, name))))
	r := strings.NewReplacer("CHART_REPO_URL", c.repo.URL, "OCI_REGISTRY", c.oci.Host())
	placeholders = strings.NewReplacer(c.repo.URL, "CHART_REPO_URL", c.oci.Host(), "OCI_REGISTRY")
	err := filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, []byte(r.Replace(string(data))), 0o644)
	})
	must(t, err)
	return dst
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// importAndCheck imports a repository, checks the report against its
// golden file, that the fleet validates and that a second import changes
// nothing; it returns the fleet's folder.
func importAndCheck(t *testing.T, tool, name, src string, args ...string) string {
	t.Helper()
	out := filepath.Join(filepath.Dir(src), "fleet")
	cmd := append([]string{"import", tool}, args...)
	code, stdout, stderr := run(t, append(cmd, "--out", out)...)
	if code != 0 {
		t.Fatalf("import: exit %d: %s\n%s", code, stderr, stdout)
	}
	checkReport(t, name, strings.ReplaceAll(stdout, filepath.ToSlash(filepath.Dir(out))+"/src/", ""))
	checkFleet(t, name, out)
	if code, stdout, _ := run(t, "validate", out); code != 0 {
		t.Fatalf("validate of the imported fleet: exit %d:\n%s", code, stdout)
	}
	before := snapshot(t, out)
	if code, _, stderr := run(t, append(cmd, "--out", out)...); code != 0 {
		t.Fatalf("second import: exit %d: %s", code, stderr)
	}
	if after := snapshot(t, out); !reflect.DeepEqual(before, after) {
		t.Error("a second import changed the fleet")
	}
	return out
}

func checkReport(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join(importTestdata, name+".report")
	if *updateImport {
		must(t, os.WriteFile(file, []byte(got), 0o644))
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test -run TestImport -update-import writes it)", err)
	}
	if got != string(want) {
		t.Errorf("report differs from %s:\n--- got\n%s--- want\n%s", file, got, want)
	}
}

// checkFleet compares the documents the import wrote with
// testdata/import/<name>.fleet/, the test servers' addresses put back as
// the placeholders of the source repository.
func checkFleet(t *testing.T, name, out string) {
	t.Helper()
	golden := filepath.Join(importTestdata, name+".fleet")
	got := map[string]string{}
	for _, pattern := range []string{"clusters/*/cluster.yaml", "profiles/*.yaml", "classifiers/*.yaml"} {
		files, err := filepath.Glob(filepath.Join(out, pattern))
		must(t, err)
		for _, f := range files {
			data, err := os.ReadFile(f)
			must(t, err)
			rel, _ := filepath.Rel(out, f)
			got[rel] = placeholders.Replace(string(data))
		}
	}
	if *updateImport {
		must(t, os.RemoveAll(golden))
		for rel, data := range got {
			must(t, os.MkdirAll(filepath.Dir(filepath.Join(golden, rel)), 0o755))
			must(t, os.WriteFile(filepath.Join(golden, rel), []byte(data), 0o644))
		}
	}
	want := map[string]string{}
	must(t, filepath.WalkDir(golden, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(golden, p)
		want[rel] = string(data)
		return err
	}))
	for rel, w := range want {
		if got[rel] != w {
			t.Errorf("%s differs from %s (-update-import rewrites it):\n--- got\n%s--- want\n%s", rel, golden, got[rel], w)
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok {
			t.Errorf("%s written but not in %s", rel, golden)
		}
	}
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = string(data)
		return err
	}))
	return out
}

// checkRender renders the fleet for a cluster and compares the objects
// with the hand-written expectation testdata/import/<name>.expected/<cluster>.yaml.
func checkRender(t *testing.T, fleet, name, cluster string, flags ...string) {
	t.Helper()
	args := append([]string{"render", "--cluster", cluster, "--helm-plain-http",
		"--helm-cache-dir", t.TempDir(), "--show-secrets",
		"--allow-url-prefix", "http://127.0.0.1:"}, flags...) // the test chart servers
	code, stdout, stderr := run(t, append(args, fleet)...)
	if code != 0 {
		t.Fatalf("render %s: exit %d: %s", cluster, code, stderr)
	}
	got := objectsByKey(t, "render output", []byte(stdout))
	file := filepath.Join(importTestdata, name+".expected", cluster+".yaml")
	data, err := os.ReadFile(file)
	must(t, err)
	want := objectsByKey(t, file, data)
	for _, k := range sortedUnion(got, want) {
		g, w := got[k], want[k]
		switch {
		case w == nil:
			t.Errorf("%s: %s rendered but not expected:\n%s", cluster, k, toYAML(g))
		case g == nil:
			t.Errorf("%s: %s expected but not rendered", cluster, k)
		case !reflect.DeepEqual(g, w):
			t.Errorf("%s: %s differs:\n--- rendered\n%s--- expected\n%s", cluster, k, toYAML(g), toYAML(w))
		}
	}
}

func objectsByKey(t *testing.T, what string, data []byte) map[string]map[string]any {
	t.Helper()
	docs, err := migrate.ParseDocs(what, data)
	must(t, err)
	out := map[string]map[string]any{}
	for _, d := range docs {
		js, err := yaml.Marshal(d.Obj)
		must(t, err)
		obj := map[string]any{}
		must(t, yaml.Unmarshal(js, &obj))
		k := d.Kind() + "/" + d.Namespace() + "/" + d.Name()
		if _, dup := out[k]; dup {
			t.Errorf("%s: %s twice", what, k)
		}
		out[k] = obj
	}
	return out
}

func sortedUnion(a, b map[string]map[string]any) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func toYAML(v any) string {
	b, _ := yaml.Marshal(v)
	return string(bytes.TrimSpace(b)) + "\n"
}

// TestImportFluxExample imports a repository shaped like fluxcd's
// flux2-kustomize-helm-example (infrastructure controllers and configs,
// apps with a base and per-cluster overlays, HelmReleases whose values
// each cluster patches; one cluster on a GitRepository, one on an
// ArtifactGenerator) and checks that each cluster gets what Flux would
// deploy there.
func TestImportFluxExample(t *testing.T) {
	src := sourceRepo(t, "flux-example", serveCharts(t))
	fleet := importAndCheck(t, "flux", "flux-example", src, src)
	for _, c := range []string{"production", "staging"} {
		t.Run(c, func(t *testing.T) { checkRender(t, fleet, "flux-example", c) })
	}
}

// TestImportFluxFeatures imports a repository that uses the Flux
// features regatta now has (postBuild substitution with substituteFrom
// and the opt-out annotation, a folder without kustomization.yaml, wait
// unset, HelmRelease valuesFrom with valuesKey and targetPath, test.enable,
// disableWait, post-renderers, targetNamespace) plus Kustomizations that
// a build applies, and sources the import must report (another Git
// repository, a Bucket).
func TestImportFluxFeatures(t *testing.T) {
	src := sourceRepo(t, "flux-features", serveCharts(t))
	encryptFile(t, filepath.Join(src, "releases", "webapp-auth.yaml"))
	fleet := importAndCheck(t, "flux", "flux-features", src, src)
	for _, c := range []string{"dev", "prod"} {
		t.Run(c, func(t *testing.T) { checkRender(t, fleet, "flux-features", c, "--sops-age-key-file", planAgeKey) })
	}
}

// encryptFile encrypts a Secret manifest in place with SOPS for the test
// age key, as `sops --encrypt --encrypted-regex '^(data|stringData)$'` does.
func encryptFile(t *testing.T, file string) {
	t.Helper()
	plain, err := os.ReadFile(file)
	must(t, err)
	keys, err := sops.LoadAgeKeyFile(planAgeKey)
	must(t, err)
	enc, err := sops.Encrypt(file, plain, "^(data|stringData)$", keys.Recipients())
	must(t, err)
	must(t, os.WriteFile(file, enc, 0o644))
}

// TestImportSveltosExample imports ClusterProfiles (policyRefs to a
// ConfigMap, helmCharts from a chart repository and an OCI registry with
// values and valuesFrom, kustomizationRefs to a Flux source, patches,
// validateHealths, driftExclusions), a Profile (clusterRefs, a Secret and
// a Flux-source policyRef), Classifiers, a SveltosCluster and a Cluster
// API Cluster, and checks what each cluster gets.
func TestImportSveltosExample(t *testing.T) {
	src := sourceRepo(t, "sveltos-example", serveCharts(t))
	fleet := importAndCheck(t, "sveltos", "sveltos-example", src,
		filepath.Join(src, "manifests"), "--source", filepath.Join(src, "source"))
	for _, c := range []string{"edge-1", "edge-2"} {
		t.Run(c, func(t *testing.T) { checkRender(t, fleet, "sveltos-example", c) })
	}
}

func TestImportErrors(t *testing.T) {
	repo := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(repo, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"import", "flux"}, 2, "expected one directory, got 0 arguments"},
		{[]string{"import", "flux", filepath.Join(repo, "nope")}, 2, "no such file"},
		{[]string{"import", "flux", repo}, 1, "a Flux repository has a clusters/ folder"},
		{[]string{"import", "sveltos", "x.yaml"}, 2, "--out is required"},
		{[]string{"import", "sveltos", "--out", repo}, 2, "expected at least one file"},
		{[]string{"import", "sveltos", filepath.Join(repo, "nope.yaml"), "--out", t.TempDir()}, 2, "no such file"},
	}
	for _, tc := range tests {
		code, _, stderr := run(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d %q, want %d with %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}

	// A Kustomization that cannot be built is reported with its file and
	// line, and the rest of the repository is still imported.
	write("clusters/one/apps.yaml", `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: broken, namespace: flux-system}
spec:
  path: ./missing
  sourceRef: {kind: GitRepository, name: flux-system}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: good, namespace: flux-system}
spec:
  path: ./good
  sourceRef: {kind: OCIRepository, name: elsewhere}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: plain, namespace: flux-system}
spec:
  dependsOn: [{name: broken}]
  path: ./good
  sourceRef: {kind: GitRepository, name: flux-system}
`)
	write("good/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good, namespace: default}\n")
	code, stdout, stderr := run(t, "import", "flux", repo)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"clusters/one/apps.yaml:5: spec.path: Kustomization broken: kustomize build of missing failed, not carried over",
		"clusters/one/apps.yaml:13: spec.sourceRef: Kustomization good: OCIRepository flux-system/elsewhere is not defined in this repository: not carried over",
		"clusters/one/apps.yaml:19: spec.dependsOn: Kustomization Kustomization/flux-system/broken is not defined for cluster one: dependency dropped",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if code, out, _ := run(t, "validate", repo); code != 0 {
		t.Errorf("the imported fleet is invalid:\n%s", out)
	}
}
