package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/diff"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render/sops"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/plan/golden")

const (
	planFleet   = "testdata/plan/fleet"
	planGolden  = "testdata/plan/golden"
	planAgeKey  = "../../../render/sops/testdata/age.key"
	sopsFile    = "creds/api-token.yaml"
	sopsBase    = "sops-token-base-value"
	sopsHead    = "sops-token-head-value"
	dbPassHead  = "head-password-value"
	dbPassBase  = "base-password-value"
	dbSecretFmt = "apiVersion: v1\nkind: Secret\nmetadata: {name: db-credentials, namespace: default}\ntype: Opaque\ndata:\n  user: YXBw\n  password: %s\n"
)

// planScenario is a pair of commits: the fleet of testdata/plan/fleet,
// then the same with edits.
type planScenario struct {
	name string
	// edits maps repository paths to new content; "" deletes the file.
	edits map[string]string
	// sopsToken re-encrypts the SOPS Secret with this value at head.
	sopsToken string
	// status, when set, is committed on the regatta/status branch.
	status *status.Snapshot
	code   int
}

func planScenarios() []planScenario {
	return []planScenario{
		{name: "overlay-values", code: 2, edits: map[string]string{
			"web/overlays/prod/kustomization.yaml": strings.Replace(readFleet("web/overlays/prod/kustomization.yaml"), "value: 3", "value: 5", 1)}},
		{name: "label-change", code: 2, edits: map[string]string{
			"clusters/staging-1/cluster.yaml": strings.Replace(readFleet("clusters/staging-1/cluster.yaml"), "env: staging", "env: prod", 1)}},
		{name: "profile-deleted", code: 2, edits: map[string]string{"profiles/monitoring.yaml": ""}},
		{name: "selector-change", code: 2, edits: map[string]string{
			"profiles/monitoring.yaml": strings.Replace(readFleet("profiles/monitoring.yaml"), "env: prod", "env: production", 1)}},
		{name: "new-cluster", code: 2, edits: map[string]string{
			"clusters/prod-3/cluster.yaml": strings.ReplaceAll(readFleet("clusters/prod-1/cluster.yaml"), "prod-1", "prod-3")}},
		{name: "secret-change", code: 2, sopsToken: sopsHead, edits: map[string]string{
			"creds/db.yaml": fmt.Sprintf(dbSecretFmt, b64(dbPassHead))}},
		{name: "status-facts", code: 2, status: planStatus(), edits: map[string]string{
			"profiles/gpu-drivers.yaml": profileYAML("gpu-drivers", "gpu: present", "gpu"),
			"gpu/daemonset.yaml":        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: gpu-driver, namespace: kube-system}\nspec: {selector: {matchLabels: {app: gpu}}, template: {metadata: {labels: {app: gpu}}, spec: {containers: [{name: d, image: driver:1}]}}}\n",
			"profiles/compat.yaml":      profileYAML("compat", "kubernetes: v1-36", "compat"),
			"compat/policy.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: compat-v1-36, namespace: default}\ndata: {mode: legacy}\n"}},
		{name: "broken-head-validation", code: 1, edits: map[string]string{
			"profiles/web.yaml": strings.Replace(readFleet("profiles/web.yaml"), "web/overlays/staging", "web/overlays/missing", 1)}},
		{name: "broken-head-render", code: 1, edits: map[string]string{
			"web/overlays/prod/kustomization.yaml": "namespace: web\nresources: [../../nope]\n"}},
		{name: "no-change", code: 0, edits: map[string]string{"README.md": "# the test fleet, reworded\n"}},
		{name: "new-pulled-cluster", code: 2, edits: map[string]string{ // shown like any other, though no kubeconfig exists for it
			"clusters/edge-1/cluster.yaml": strings.ReplaceAll(strings.Replace(readFleet("clusters/prod-1/cluster.yaml"), "spec: {}", "spec: {mode: pull}", 1), "prod-1", "edge-1")}},
	}
}

func TestPlanGolden(t *testing.T) {
	for _, sc := range planScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			dir, revs := planRepo(t, sc)
			for _, format := range []string{"text", "markdown", "json"} {
				code, stdout, stderr := run(t, "plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, "-o", format, dir)
				if code != sc.code {
					t.Errorf("%s: exit %d, want %d\n%s%s", format, code, sc.code, stdout, stderr)
				}
				checkGolden(t, sc.name+"."+map[string]string{"text": "txt", "markdown": "md", "json": "json"}[format], revs.Replace(stdout))
			}
		})
	}
}

func TestPlanNeverPrintsSecretValues(t *testing.T) {
	sc := planScenarios()[5]
	dir, _ := planRepo(t, sc)
	for _, format := range []string{"text", "markdown", "json"} {
		_, stdout, stderr := run(t, "plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, "-o", format, dir)
		for _, secret := range []string{dbPassBase, dbPassHead, sopsBase, sopsHead} {
			for _, form := range []string{secret, b64(secret), b64(secret)[:12]} {
				if strings.Contains(stdout+stderr, form) {
					t.Errorf("%s output holds %q", format, form)
				}
			}
		}
		for _, want := range []string{"data.password", "stringData.token", diff.RedactedChanged} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s output lacks %q:\n%s", format, want, stdout)
			}
		}
	}
}

func TestPlanJSONReport(t *testing.T) {
	dir, _ := planRepo(t, planScenarios()[1])
	_, stdout, _ := run(t, "plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, "-o", "json", dir)
	var r diff.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.SchemaVersion != diff.SchemaVersion || r.Summary.ClustersAffected != 1 || r.Summary.ProfilesGained != 1 || len(r.Groups) != 1 {
		t.Fatalf("report = %+v", r.Summary)
	}
	g := r.Groups[0]
	gained := g.Profiles[0]
	if g.Clusters[0] != "staging-1" || gained.Profile != "monitoring" || gained.Change != diff.ProfileGained ||
		gained.Reasons[0].Kind != diff.ReasonLabelChanged || gained.Reasons[0].To.Value != "prod" {
		t.Errorf("group = %+v", g)
	}
}

func TestPlanExitCodesAndFlags(t *testing.T) {
	dir, _ := planRepo(t, planScenarios()[0])
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"plan", dir}, 1, "--base is required"},
		{[]string{"plan", "--base", "HEAD~1", "-o", "xml", dir}, 1, "--output must be text, markdown or json"},
		{[]string{"plan", "--base", "HEAD~1", "--color", "sometimes", dir}, 1, "--color must be"},
		{[]string{"plan", "--base", "nope", dir}, 1, `resolve "nope"`},
		{[]string{"plan", "--base", "HEAD~1", "--frobnicate", dir}, 1, "unknown flag"},
		{[]string{"plan", "--base", "HEAD", t.TempDir()}, 1, ""},
		{[]string{"plan", "--base", "HEAD", "--sops-age-key-file", planAgeKey, dir}, 0, ""},
		{[]string{"plan", "--base", "HEAD~1", "--head", "HEAD~1", "--sops-age-key-file", planAgeKey, dir}, 0, ""},
		{[]string{"plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, dir}, 2, ""},
		{[]string{"plan", "--base", "HEAD~1", dir}, 1, "no age key is configured"},
	}
	for _, tt := range tests {
		code, stdout, stderr := run(t, tt.args...)
		if code != tt.code || !strings.Contains(stdout+stderr, tt.msg) {
			t.Errorf("%v: exit %d, want %d (%q)\n%s%s", tt.args[1:], code, tt.code, tt.msg, stdout, stderr)
		}
	}
}

func TestPlanColor(t *testing.T) {
	dir, _ := planRepo(t, planScenarios()[0])
	args := []string{"plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, dir}
	_, plain, _ := run(t, args...)
	_, colored, _ := run(t, append(args, "--color", "always")...)
	if strings.Contains(plain, "\x1b[") || !strings.Contains(colored, "\x1b[32m+") || !strings.Contains(colored, "\x1b[31m-") {
		t.Errorf("colour: plain has escapes or coloured lacks them:\n%s", colored)
	}
}

// planRepo builds a scenario's repository and returns it with a replacer
// that turns its revisions into stable placeholders.
func planRepo(t testing.TB, sc planScenario) (string, *strings.Replacer) {
	dir := t.TempDir()
	copyFleet(t, dir)
	writeSOPS(t, dir, sopsBase)
	planGit(t, dir, "init", "-q", "-b", "main")
	planGit(t, dir, "add", "-A")
	planGit(t, dir, "commit", "-qm", "base")
	var pairs []string
	if sc.status != nil {
		pairs = append(pairs, addStatusBranch(t, dir, *sc.status), "STATUS-REVISION")
	}
	for p, content := range sc.edits {
		if content == "" {
			os.Remove(filepath.Join(dir, p))
			continue
		}
		writePlanFiles(t, dir, map[string]string{p: content})
	}
	if sc.sopsToken != "" {
		writeSOPS(t, dir, sc.sopsToken)
	}
	planGit(t, dir, "add", "-A")
	planGit(t, dir, "commit", "-q", "--allow-empty", "-m", "head")
	for rev, name := range map[string]string{"HEAD~1": "BASE", "HEAD": "HEAD"} {
		pairs = append(pairs, revParse(t, dir, rev), name+"-REVISION")
	}
	full := len(pairs)
	for i := 0; i < full; i += 2 {
		pairs = append(pairs, pairs[i][:8], strings.TrimSuffix(pairs[i+1], "-REVISION"))
	}
	return dir, strings.NewReplacer(pairs...)
}

func copyFleet(t testing.TB, dst string) {
	err := fs.WalkDir(os.DirFS(planFleet), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		writePlanFiles(t, dst, map[string]string{p: readFleet(p)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readFleet(p string) string {
	b, err := os.ReadFile(filepath.Join(planFleet, p))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// writeSOPS writes the SOPS-encrypted Secret of the creds profile.
func writeSOPS(t testing.TB, dir, token string) {
	keys, err := sops.LoadAgeKeyFile(planAgeKey)
	if err != nil {
		t.Fatal(err)
	}
	plain := "apiVersion: v1\nkind: Secret\nmetadata: {name: api-token, namespace: default}\nstringData:\n  token: " + token + "\n"
	enc, err := sops.Encrypt(sopsFile, []byte(plain), sops.SecretRegex, keys.Recipients())
	if err != nil {
		t.Fatal(err)
	}
	writePlanFiles(t, dir, map[string]string{sopsFile: string(enc)})
}

// addStatusBranch commits snap on the status branch and returns its SHA.
func addStatusBranch(t testing.TB, dir string, snap status.Snapshot) string {
	planGit(t, dir, "checkout", "-q", "--orphan", DefaultStatusBranch)
	planGit(t, dir, "rm", "-rfq", ".")
	files, err := status.Files(snap)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		writePlanFiles(t, dir, map[string]string{name: string(b)})
	}
	planGit(t, dir, "add", "-A")
	planGit(t, dir, "commit", "-qm", "status")
	sha := revParse(t, dir, "HEAD")
	planGit(t, dir, "checkout", "-q", "-f", "main")
	planGit(t, dir, "clean", "-qfdx")
	return sha
}

func planStatus() *status.Snapshot {
	return &status.Snapshot{Clusters: []status.ClusterStatus{
		{Cluster: "prod-1", Reachable: true, KubernetesVersion: "v1.37.2"},
		{Cluster: "prod-2", Reachable: true, KubernetesVersion: "v1.36.3",
			ClassifierLabels: map[string]map[string]string{"gpu": {"gpu": "present"}}},
	}}
}

func profileYAML(name, selector, path string) string {
	return fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: %s}\nspec:\n  clusterSelector: {matchLabels: {%s}}\n  addons:\n  - name: %s\n    manifests: {path: %s}\n",
		name, selector, path, path)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// planGit runs git with a fixed identity and dates.
func planGit(t testing.TB, dir string, args ...string) {
	t.Helper()
	if _, err := gitOutput(dir, args...); err != nil {
		t.Fatal(err)
	}
}

func revParse(t testing.TB, dir, rev string) string {
	out, err := gitOutput(dir, "rev-parse", rev)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), nil
}

// renderCounts match the render counts of a plan, which vary with how
// concurrent renders meet in the cache; golden files hold N and M.
var renderCounts = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`renders: \d+ run, \d+ shared`), "renders: N run, M shared"},
	{regexp.MustCompile(`"run": \d+,(\s+)"shared": \d+`), `"run": N,${1}"shared": M`},
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	found := false
	for _, rc := range renderCounts {
		found = found || rc.re.MatchString(got)
		got = rc.re.ReplaceAllString(got, rc.repl)
	}
	if !found {
		t.Errorf("%s: the plan prints no render counts", name)
	}
	path := filepath.Join(planGolden, name)
	if *update {
		writePlanFiles(t, planGolden, map[string]string{name: got})
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestPlanGolden -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -run TestPlanGolden -update rewrites it):\n%s", path, got)
	}
}

// BenchmarkPlan1000Clusters plans a change to one profile's production
// overlay over a fleet of 1,000 clusters (500 production) with three
// profiles: 3,000 pairs, of which 500 change.
func BenchmarkPlan1000Clusters(b *testing.B) {
	dir := benchFleet(b, 1000)
	args := []string{"plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, "-o", "json", dir}
	for b.Loop() {
		if code := Main(context.Background(), args, io.Discard, io.Discard); code != ExitChanged {
			b.Fatalf("exit %d", code)
		}
	}
}

func benchFleet(b *testing.B, n int) string {
	dir := b.TempDir()
	copyFleet(b, dir)
	writeSOPS(b, dir, sopsBase)
	os.RemoveAll(filepath.Join(dir, "clusters"))
	files := map[string]string{}
	envs := []string{"prod", "staging"}
	for i := range n {
		name := fmt.Sprintf("c%04d", i)
		files["clusters/"+name+"/cluster.yaml"] = fmt.Sprintf(
			"apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\n  labels: {env: %s, region: r%d}\nspec: {}\n", name, envs[i%2], i%7)
	}
	writePlanFiles(b, dir, files)
	planGit(b, dir, "init", "-q", "-b", "main")
	planGit(b, dir, "add", "-A")
	planGit(b, dir, "commit", "-qm", "base")
	writePlanFiles(b, dir, map[string]string{"web/overlays/prod/kustomization.yaml": strings.Replace(readFleet("web/overlays/prod/kustomization.yaml"), "value: 3", "value: 5", 1)})
	planGit(b, dir, "commit", "-qam", "head")
	return dir
}

func writePlanFiles(t testing.TB, dir string, files map[string]string) {
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

// TestPlanLiveUnreachable runs --live against clusters that cannot be
// reached: they are reported, and the plan still succeeds. The live
// comparison itself is tested against a real API server in
// reconciler/diff.
func TestPlanLiveUnreachable(t *testing.T) {
	dir, _ := planRepo(t, planScenarios()[0])
	kubeconfigs := t.TempDir()
	writePlanFiles(t, kubeconfigs, map[string]string{"prod-1.yaml": `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: not-a-real-token}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`})
	code, stdout, stderr := run(t, "plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, "--live",
		"--kubeconfig-dir", kubeconfigs, "--cluster-timeout", "2s", "-o", "json", dir)
	if code != 2 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var r diff.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Live == nil || len(r.Live.Clusters) != 3 {
		t.Fatalf("%v\n%s", err, stdout)
	}
	p1, p2 := r.Live.Clusters[0], r.Live.Clusters[1]
	if p1.Reachable || !strings.Contains(p1.Error, "connection refused") || strings.Contains(stdout, "not-a-real-token") {
		t.Errorf("prod-1 = %+v", p1)
	}
	if p2.Reachable || !strings.Contains(p2.Error, "kubeconfig not found: no prod-2.yaml") {
		t.Errorf("prod-2 = %+v", p2)
	}
}

// TestPlanInvalidBase plans a change that repairs a broken base: the base
// is compared as an empty fleet, with a warning.
func TestPlanInvalidBase(t *testing.T) {
	dir := t.TempDir()
	copyFleet(t, dir)
	writeSOPS(t, dir, sopsBase)
	good := readFleet("profiles/web.yaml")
	writePlanFiles(t, dir, map[string]string{"profiles/web.yaml": strings.Replace(good, "web/overlays/staging", "web/overlays/missing", 1)})
	planGit(t, dir, "init", "-q", "-b", "main")
	planGit(t, dir, "add", "-A")
	planGit(t, dir, "commit", "-qm", "broken")
	writePlanFiles(t, dir, map[string]string{"profiles/web.yaml": good})
	planGit(t, dir, "commit", "-qam", "fixed")
	code, stdout, stderr := run(t, "plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, dir)
	if code != 2 || !strings.Contains(stdout, "the base revision HEAD~1 is invalid (1 error, first: profiles/web.yaml:10:") ||
		!strings.Contains(stdout, "3 of 3 clusters affected") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestPlanTemplateBombFailsItsPairs: a bomb in one overlay's templated
// path fails the plan (exit 1) with the file and line, after a bounded
// time, while the other pairs are still compared.
func TestPlanTemplateBombFailsItsPairs(t *testing.T) {
	web := strings.Replace(readFleet("profiles/web.yaml"), "path: web/overlays/prod",
		`path: 'web/overlays/prod{{ range (int "100000000000000") }}{{ end }}'`, 1)
	dir, _ := planRepo(t, planScenario{name: "bomb", edits: map[string]string{"profiles/web.yaml": web}})
	start := time.Now()
	code, stdout, stderr := run(t, "plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, "-o", "text", dir)
	if code != 1 || !strings.Contains(stdout, "profiles/web.yaml:14") || !strings.Contains(stdout, "template limit exceeded") {
		t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
	}
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("plan took %s", elapsed)
	}
}
