package app

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render/sops"
)

// TestRunCommitStatusFlags: `regatta run` refuses commit status flags that
// cannot work, before it reads the repository.
func TestRunCommitStatusFlags(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty-token")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REGATTA_COMMIT_STATUS_TOKEN", "")
	remote := "https://github.com/acme/fleet.git"
	cases := []struct {
		args []string
		err  string
	}{
		{[]string{"--repo", remote, "--commit-status-provider", "azure"}, `--commit-status-provider "azure": not one of github, gitlab, gitea, bitbucket (Azure DevOps is not supported)`},
		{[]string{"--repo", remote, "--commit-status-stages"}, "--commit-status-* flags need --commit-status-provider"},
		{[]string{"--repo", dir, "--commit-status-provider", "github"}, `--commit-status-repo: repository "` + dir + `": not an https://, ssh:// or git@host:path URL; give --commit-status-repo`},
		{[]string{"--repo", remote, "--commit-status-provider", "github"}, "--commit-status-provider github needs --commit-status-token-file (or $REGATTA_COMMIT_STATUS_TOKEN)"},
		{[]string{"--repo", remote, "--commit-status-provider", "github", "--commit-status-token-file", empty}, "--commit-status-token-file " + empty + ": the file is empty"},
		{[]string{"--repo", remote, "--commit-status-provider", "github", "--commit-status-token-file", filepath.Join(dir, "missing")}, "--commit-status-token-file: open " + filepath.Join(dir, "missing")},
		{[]string{"--repo", "https://git.example.com/acme/fleet.git", "--commit-status-provider", "bitbucket"}, "git.example.com is not bitbucket.org"},
		{[]string{"--repo", dir, "--commit-status-repo", "acme/fleet", "--commit-status-provider", "bitbucket"}, "needs a link for each status: give --commit-status-target-url"},
		{[]string{"--repo", remote, "--commit-status-repo", "acme", "--commit-status-provider", "github", "--commit-status-token-file", "/etc/hostname"}, `commit status repository "acme": want owner/repo`},
	}
	for _, c := range cases {
		code, _, stderr := run(t, append([]string{"run", "--once", "--metrics-addr", "", "--log-level", "error"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.err) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.err)
		}
	}
	f := commitStatusFlags{provider: "github", repo: "acme/fleet", context: "regatta/fleet"}
	if _, err := f.publisher(remote, DefaultStatusBranch, true, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "an agent (--cluster) sets no commit statuses") {
		t.Errorf("agent mode: %v", err)
	}
}

func TestCommitStatusConfig(t *testing.T) {
	cases := []struct {
		provider, repo, url, repoFlag string
		base, path, target            string
	}{
		{"github", "git@github.com:acme/fleet.git", "", "", "", "acme/fleet", "https://github.com/acme/fleet/blob/regatta/status/status/README.md"},
		{"github", "https://ghe.example.com/acme/fleet", "", "", "https://ghe.example.com", "acme/fleet", "https://ghe.example.com/acme/fleet/blob/regatta/status/status/README.md"},
		{"gitlab", "https://gitlab.com/platform/infra/fleet.git", "", "", "", "platform/infra/fleet", "https://gitlab.com/platform/infra/fleet/-/blob/regatta/status/status/README.md"},
		{"gitlab", "ssh://git@gitlab.example.com:2222/platform/fleet.git", "https://gitlab.example.com:8443", "", "https://gitlab.example.com:8443", "platform/fleet", "https://gitlab.example.com/platform/fleet/-/blob/regatta/status/status/README.md"},
		{"gitea", "https://codeberg.org/acme/fleet.git", "", "", "https://codeberg.org", "acme/fleet", "https://codeberg.org/acme/fleet/src/branch/regatta/status/status/README.md"},
		{"bitbucket", "git@bitbucket.org:acme/fleet.git", "", "", "", "acme/fleet", "https://bitbucket.org/acme/fleet/src/regatta/status/status/README.md"},
		{"github", "/srv/fleet", "https://ghe.example.com", "acme/fleet", "https://ghe.example.com", "acme/fleet", ""},
	}
	for _, c := range cases {
		f := commitStatusFlags{provider: c.provider, url: c.url, repo: c.repoFlag}
		cfg, target, err := f.config(c.repo, DefaultStatusBranch)
		if err != nil || cfg.BaseURL != c.base || cfg.Repo != c.path || target != c.target {
			t.Errorf("%s %s: got %q %q %q %v\nwant %q %q %q", c.provider, c.repo, cfg.BaseURL, cfg.Repo, target, err, c.base, c.path, c.target)
		}
	}
}

// TestCommitStatusPublisher: the flags build a Publisher that sets the
// fleet's status on a (GitHub Enterprise) host with the token of its file,
// linking the dashboard, and logs no token.
func TestCommitStatusPublisher(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	var mu sync.Mutex
	var got []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v3/repos/acme/fleet/statuses/"+sha || r.Header.Get("Authorization") != "Bearer gh-token" {
			t.Errorf("%s %s %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		}
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got = append(got, body)
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("gh-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &testenv.LogBuffer{}
	f := commitStatusFlags{provider: "github", url: srv.URL, tokenFile: tokenFile, context: "regatta/fleet"}
	pub, err := f.publisher("https://ghe.example.com/acme/fleet.git", DefaultStatusBranch, false, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	startPublisher(t.Context(), pub)
	pub.Observe(status.Snapshot{
		Fleet:    status.Fleet{SourceRevision: sha, AppliedRevision: sha},
		Clusters: []status.ClusterStatus{{Cluster: "a", SourceRevision: sha, Reachable: true, Profiles: []status.Profile{{Name: "p", State: status.StateApplied}}}},
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]any{"state": "success", "context": "regatta/fleet", "description": "1 pair applied on 1 cluster",
		"target_url": "https://ghe.example.com/acme/fleet/blob/regatta/status/status/README.md"}
	if len(got) != 1 || len(got[0]) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[0][k] != v {
			t.Errorf("%s: %v, want %v", k, got[0][k], v)
		}
	}
	if strings.Contains(logs.String(), "gh-token") {
		t.Error("the token reached the log")
	}
}

// TestRunOnceSetsCommitStatus: `regatta run --once` on a real API server
// sets the followed commit's status through the daemon's status hook: the
// revision's pairs applied, the GitHub-API server on loopback receives
// "success" on that commit.
func TestRunOnceSetsCommitStatus(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "cs"}}})
	var mu sync.Mutex
	got := map[string][]string{} // commit → states
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sha, ok := strings.CutPrefix(r.URL.Path, "/api/v3/repos/acme/fleet/statuses/")
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if ok && r.Method == http.MethodPost && r.Header.Get("Authorization") == "Bearer gh-token" {
			mu.Lock()
			got[sha] = append(got[sha], fmt.Sprint(body["state"]))
			mu.Unlock()
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("gh-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keyFile := "../../../render/sops/testdata/age.key"
	writeFiles(t, dir, map[string]string{
		"clusters/cs/cluster.yaml":         "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: cs, labels: {env: prod}}\n",
		"clusters/cs/kubeconfig.sops.yaml": sopsKubeconfig(t, keyFile, "cs", env.Cluster("cs").Kubeconfig()),
		"profiles/hello.yaml":              "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: hello}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - {name: cm, manifests: {path: hello}}\n",
		"hello/cm.yaml":                    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello, namespace: default}\n",
	})
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "fleet")
	sha, err := gitOutput(dir, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	sha = strings.TrimSpace(sha)
	code, stdout, stderr := run(t, "run", "--once", "--repo", dir, "--metrics-addr", "", "--log-level", "warn",
		"--sops-age-key-file", keyFile,
		"--commit-status-provider", "github", "--commit-status-url", srv.URL, "--commit-status-repo", "acme/fleet",
		"--commit-status-token-file", token, "--allow-url-prefix", srv.URL+"/")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	states := got[sha]
	if len(states) == 0 || states[len(states)-1] != "success" {
		t.Fatalf("statuses set on %s: %v (all: %v)\n%s", sha, states, got, stderr)
	}
}

// sopsKubeconfig is a cluster folder's kubeconfig Secret manifest,
// SOPS-encrypted with the test age key.
func sopsKubeconfig(t *testing.T, keyFile, cluster string, kubeconfig []byte) string {
	t.Helper()
	keys, err := sops.LoadAgeKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Secret\nmetadata: {name: " + cluster + "-kubeconfig, namespace: regatta-system}\nstringData:\n  value: |\n")
	for _, l := range strings.Split(strings.TrimSpace(string(kubeconfig)), "\n") {
		b.WriteString("    " + l + "\n")
	}
	enc, err := sops.Encrypt("kubeconfig.sops.yaml", []byte(b.String()), sops.SecretRegex, keys.Recipients())
	if err != nil {
		t.Fatal(err)
	}
	return string(enc)
}
