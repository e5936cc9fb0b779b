package e2e

import (
	"bufio"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/internal/testenv/signing"
)

// signedFleet is a pushed cluster and a pulled one; profile app (a
// ConfigMap at version) selects both, and, with extra, profile extra too.
func signedFleet(pushKubeconfig []byte, version string, extra bool) map[string]string {
	files := map[string]string{
		"clusters/push-1/cluster.yaml":    clusterYAML("push-1", "push", "env: prod"),
		"clusters/push-1/kubeconfig.yaml": kubeconfigSecretYAML("push-1", pushKubeconfig),
		"clusters/pull-1/cluster.yaml":    clusterYAML("pull-1", "pull", "env: prod"),
		"profiles/app.yaml":               "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: app}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: app\n    manifests: {path: app}\n",
		"app/objects.yaml":                "apiVersion: v1\nkind: Namespace\nmetadata: {name: signed-e2e}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: signed-e2e}\ndata: {version: " + version + "}\n",
		"profiles/extra.yaml":             "",
		"extra/objects.yaml":              "",
	}
	if extra {
		files["profiles/extra.yaml"] = "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: extra}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: extra\n    manifests: {path: extra}\n"
		files["extra/objects.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: signed-e2e}\ndata: {version: extra}\n"
	}
	return files
}

// TestSignedCommits is the acceptance test of --verify-commits=every on
// real API servers, a real Git server over HTTP and commits signed by
// ssh-keygen through git: a signed revision reaches the pushed cluster
// (central daemon) and the pulled one (its agent); an unsigned commit on
// top, and a signed one over it, are refused by both processes, which
// keep the signed revision applied and delete nothing, and say so in
// their status (commit, reason) and metrics; a restarted central daemon
// gives the same verdict; once the branch is reset past the unsigned
// commit, a signed change comes in everywhere.
func TestSignedCommits(t *testing.T) {
	names := []string{"push-1", "pull-1"}
	opts := testenv.Options{}
	for _, n := range names {
		opts.Clusters = append(opts.Clusters, testenv.ClusterOptions{Name: n})
	}
	log.SetOutput(io.Discard) // the Git server logs every request
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	env := testenv.StartT(t, opts)
	dir := t.TempDir()
	clients := map[string]kubernetes.Interface{}
	kubeconfig := filepath.Join(dir, "pull-1.kubeconfig")
	if err := os.WriteFile(kubeconfig, env.Cluster("pull-1").Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		c, err := kubernetes.NewForConfig(env.Cluster(n).RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		clients[n] = c
	}
	pw := filepath.Join(dir, "git-password")
	keys := filepath.Join(dir, "trusted-keys")
	platform := signing.NewSSHKey(t, "platform")
	if err := os.Mkdir(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{pw: gitfleet.Password, filepath.Join(keys, "allowed_signers"): platform.AllowedSigner("platform@example.com", `namespaces="git"`)} {
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fleet := gitfleet.New(t)
	pushKC := env.Cluster("push-1").Kubeconfig()
	commit := func(s signing.Signer, msg string, files map[string]string) string {
		sha := signing.Commit(t, fleet.Work, s, msg, files)
		gitfleet.Git(t, fleet.Work, "push", "-q", "-f", "origin", "HEAD:main")
		return sha
	}
	v1 := commit(platform.Signer(), "v1", signedFleet(pushKC, "v1", true))

	logDir := logDirOr(dir)
	common := []string{"--repo", fleet.URL, "--git-username", gitfleet.User, "--git-password-file", pw,
		"--interval", "500ms", "--status-interval", "1s", "--leader-elect=false",
		"--verify-commits", "every", "--trusted-keys", keys}
	central := startRegatta(t, "central", logDir, common...)
	agent := startRegatta(t, "agent-pull-1", logDir, append([]string{"--cluster", "pull-1", "--kubeconfig", kubeconfig}, common...)...)
	everywhere := func(name, version string) func() bool {
		return func() bool {
			for _, n := range names {
				if configMapVersion(t, clients[n], "signed-e2e", name) != version {
					return false
				}
			}
			return true
		}
	}
	testenv.WaitFor(t, 90*time.Second, "signed v1 everywhere", everywhere("app", "v1"))
	testenv.WaitFor(t, 10*time.Second, "profile extra everywhere", everywhere("extra", "extra"))

	// An unsigned commit that changes app and drops extra is kept out by
	// both processes, and so is a signed commit on top of it.
	unsigned := commit(signing.Unsigned, "unsigned v2", signedFleet(pushKC, "v2", false))
	refusedBy := func(rev string, procs ...*process) func() bool {
		return func() bool {
			for _, p := range procs {
				if refusals(p, "Unsigned") < 1 {
					return false
				}
			}
			f := fleet.Lookup("regatta/status", "status/fleet.yaml")
			a := fleet.Lookup("regatta-status/pull-1", "status/fleet.yaml")
			for _, y := range []string{f, a} {
				if !strings.Contains(y, "sourceRevision: "+rev) || !strings.Contains(y, "appliedRevision: "+v1) ||
					!strings.Contains(y, "reason: Unsigned") || !strings.Contains(y, "commit: "+unsigned) {
					return false
				}
			}
			return true
		}
	}
	testenv.WaitFor(t, 60*time.Second, "the unsigned commit refused by the central daemon and the agent", refusedBy(unsigned, central, agent))
	signedOnTop := commit(platform.Signer(), "signed v3 over the unsigned one", signedFleet(pushKC, "v3", false))
	testenv.WaitFor(t, 60*time.Second, "the signed commit over the unsigned one refused", refusedBy(signedOnTop, central, agent))
	if !everywhere("app", "v1")() || !everywhere("extra", "extra")() {
		t.Fatal("a refused revision changed or deleted objects")
	}

	// A restarted central daemon keeps the verdict.
	central.kill(syscall.SIGTERM)
	restarted := startRegatta(t, "central", logDir, common...)
	testenv.WaitFor(t, 60*time.Second, "the restarted daemon refuses the same commit", func() bool {
		return refusals(restarted, "Unsigned") >= 1 && restarted.ready()
	})
	if !everywhere("app", "v1")() || !everywhere("extra", "extra")() {
		t.Fatal("a restarted daemon changed or deleted objects")
	}

	// Reset past the unsigned commit: a signed change comes in.
	gitfleet.Git(t, fleet.Work, "reset", "-q", "--hard", v1)
	commit(platform.Signer(), "signed v4", signedFleet(pushKC, "v4", false))
	testenv.WaitFor(t, 90*time.Second, "signed v4 everywhere", everywhere("app", "v4"))
	testenv.WaitFor(t, 30*time.Second, "extra withdrawn everywhere", everywhere("extra", ""))
}

// refusals reads regatta_revisions_refused_total{reason} of a process.
func refusals(p *process, reason string) float64 {
	resp, err := http.Get(p.metrics)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	prefix := `regatta_revisions_refused_total{reason="` + reason + `"} `
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}
