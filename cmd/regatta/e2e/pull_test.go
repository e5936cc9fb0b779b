package e2e

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
)

// pullFleet is one pushed cluster (push-1, its kubeconfig in its folder)
// and two pulled ones. Profile app selects all three, and so does gated,
// with a rollout whose canary stage is pull-1 (the rest: pull-2 and
// push-1, so the central daemon gates on an agent's record too). broken adds to gated a Deployment
// that never becomes Available (bare API servers run no controllers),
// so the canary fails its health timeout.
func pullFleet(pushKubeconfig []byte, version string, broken bool) map[string]string {
	cluster := clusterYAML
	gated := "apiVersion: v1\nkind: Namespace\nmetadata: {name: gated-e2e}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: gated, namespace: gated-e2e}\ndata: {version: " + version + "}\n"
	if broken {
		gated += `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: never-ready, namespace: gated-e2e}
spec:
  selector: {matchLabels: {app: never-ready}}
  template:
    metadata: {labels: {app: never-ready}}
    spec: {containers: [{name: c, image: registry.invalid/none:1}]}
`
	}
	return map[string]string{
		"clusters/push-1/cluster.yaml":    cluster("push-1", "push", "env: prod, gate: on"),
		"clusters/push-1/kubeconfig.yaml": kubeconfigSecretYAML("push-1", pushKubeconfig),
		"clusters/pull-1/cluster.yaml":    cluster("pull-1", "pull", "env: prod, gate: on, stage: canary"),
		"clusters/pull-2/cluster.yaml":    cluster("pull-2", "pull", "env: prod, gate: on"),
		"profiles/app.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: app}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: app
    manifests: {path: app}
`,
		"app/objects.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: pull-e2e}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: pull-e2e}\ndata: {version: " + version + "}\n",
		"profiles/gated.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: gated}
spec:
  clusterSelector: {matchLabels: {gate: "on"}}
  healthTimeout: 5s
  rollout:
    stages:
    - name: canary
      clusterSelector: {matchLabels: {stage: canary}}
  addons:
  - name: gated
    manifests: {path: gated}
`,
		"gated/objects.yaml": gated,
	}
}

func clusterYAML(name, mode, labels string) string {
	return fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\n  labels: {%s}\nspec:\n  mode: %s\n", name, labels, mode)
}

// kubeconfigSecretYAML is a cluster's kubeconfig Secret manifest, for its
// folder.
func kubeconfigSecretYAML(name string, kubeconfig []byte) string {
	var kc strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(string(kubeconfig)), "\n") {
		kc.WriteString("    " + l + "\n")
	}
	return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + "-kubeconfig, namespace: regatta-system}\nstringData:\n  value: |\n" + kc.String()
}

// configMapVersion reads data.version of a ConfigMap; "" when absent.
func configMapVersion(t *testing.T, c kubernetes.Interface, ns, name string) string {
	t.Helper()
	cm, err := c.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data["version"]
}

// ready reports whether the process serves /readyz with 200: it
// reconciled every queued cluster once.
func (p *process) ready() bool {
	resp, err := http.Get(strings.TrimSuffix(p.metrics, "/metrics") + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestPullModeFleet is the acceptance test of pull mode on three real API
// servers: one commit reaches the pushed cluster through the central
// daemon and the two pulled ones through their agents, each process
// writing only its own cluster(s); the central status branch shows the
// pulled clusters from their agents' refs; the rollout of gated holds
// pull-2 while its canary pull-1 fails and moves it once pull-1 is
// healthy, read from pull-1's ref; an agent killed and restarted applies
// nothing; and agents for a pushed cluster or a cluster not in the
// repository are refused.
func TestPullModeFleet(t *testing.T) {
	names := []string{"push-1", "pull-1", "pull-2"}
	opts := testenv.Options{AuditLog: true}
	for _, n := range names {
		opts.Clusters = append(opts.Clusters, testenv.ClusterOptions{Name: n})
	}
	log.SetOutput(io.Discard) // the Git server logs every request
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	env := testenv.StartT(t, opts)
	clients := map[string]kubernetes.Interface{}
	dir := t.TempDir()
	kubeconfigs := map[string]string{}
	for _, n := range names {
		c, err := kubernetes.NewForConfig(env.Cluster(n).RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		clients[n] = c
		kubeconfigs[n] = filepath.Join(dir, n+".kubeconfig")
		if err := os.WriteFile(kubeconfigs[n], env.Cluster(n).Kubeconfig(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pw := filepath.Join(dir, "git-password")
	if err := os.WriteFile(pw, []byte(gitfleet.Password), 0o600); err != nil {
		t.Fatal(err)
	}
	fleetRepo := gitfleet.New(t)
	pushKC := env.Cluster("push-1").Kubeconfig()
	v1 := fleetRepo.Commit("v1", pullFleet(pushKC, "v1", false))
	logDir := logDirOr(dir)
	common := []string{"--repo", fleetRepo.URL, "--git-username", gitfleet.User, "--git-password-file", pw,
		"--interval", "500ms", "--status-interval", "1s", "--health-timeout", "30s", "--leader-elect=false"}
	central := startRegatta(t, "central", logDir, common...)
	agents := map[string]*process{}
	agentArgs := func(n string) []string {
		return append([]string{"--cluster", n, "--kubeconfig", kubeconfigs[n]}, common...)
	}
	for _, n := range names[1:] {
		agents[n] = startRegatta(t, "agent-"+n, logDir, agentArgs(n)...)
	}

	// One commit reaches all three, each by its own process.
	testenv.WaitFor(t, 90*time.Second, "app v1 and gated v1 everywhere", func() bool {
		for _, n := range names {
			if configMapVersion(t, clients[n], "pull-e2e", "app") != "v1" {
				return false
			}
		}
		for _, n := range names {
			if configMapVersion(t, clients[n], "gated-e2e", "gated") != "v1" {
				return false
			}
		}
		return true
	})
	wantWriters(t, central, map[string]bool{"push-1": true})
	for n, a := range agents {
		wantWriters(t, a, map[string]bool{n: true})
	}
	// The API servers' audit logs: the central daemon never sent a request
	// to a pulled cluster, nor an agent to another cluster than its own.
	for _, n := range names {
		want := "regatta/agent-" + n
		if n == "push-1" {
			want = "regatta"
		}
		by := requestsBy(t, env.Cluster(n))
		if by[want] == 0 {
			t.Errorf("cluster %s received no request from %s: %v", n, want, by)
		}
		for ua, count := range by {
			if ua != want {
				t.Errorf("cluster %s received %d requests from %s", n, count, ua)
			}
		}
	}
	// The central status branch shows the pulled clusters, from their refs.
	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last record read:\n%s\nstatus branch: %s", last, gitfleet.Git(t, fleetRepo.Bare, "ls-tree", "-r", "--name-only", "regatta/status"))
		}
	})
	testenv.WaitFor(t, 30*time.Second, "the status branch holds the agents' records of v1", func() bool {
		for _, n := range names[1:] {
			rec := fleetRepo.Lookup("regatta/status", "status/clusters/"+n+".yaml")
			last = rec
			if !strings.Contains(rec, "mode: pull") || !strings.Contains(rec, "sourceRevision: "+v1) || !strings.Contains(rec, "state: Applied") {
				return false
			}
		}
		return true
	})
	if dash := fleetRepo.Lookup("regatta/status", "status/README.md"); !strings.Contains(dash, "pull-1 (agent:pull-1)") || !strings.Contains(dash, "pull-2 (agent:pull-2)") {
		t.Errorf("the dashboard does not show the pulled clusters as their agents':\n%s", dash)
	}
	if own := fleetRepo.Lookup("regatta-status/pull-1", "status/clusters/pull-2.yaml"); own != "" {
		t.Errorf("pull-1's ref holds pull-2's record:\n%s", own)
	}
	out := runRegatta(t, 0, "status", "--repo", fleetRepo.URL, "--git-username", gitfleet.User, "--git-password-file", pw)
	for _, n := range names {
		if !strings.Contains(out, n) {
			t.Errorf("regatta status does not show %s:\n%s", n, out)
		}
	}

	// v2 breaks gated: the canary pull-1 fails; pull-2 must keep v1.
	v2 := fleetRepo.Commit("v2", pullFleet(pushKC, "v2", true))
	testenv.WaitFor(t, 90*time.Second, "pull-1's ref reports gated Failed at v2", func() bool {
		rec := fleetRepo.Lookup("regatta-status/pull-1", "status/clusters/pull-1.yaml")
		return strings.Contains(rec, "state: Failed") && configMapVersion(t, clients["pull-1"], "gated-e2e", "gated") == "v2"
	})
	testenv.WaitFor(t, 30*time.Second, "pull-2 and push-1 have app v2", func() bool {
		return configMapVersion(t, clients["pull-2"], "pull-e2e", "app") == "v2" && configMapVersion(t, clients["push-1"], "pull-e2e", "app") == "v2"
	})
	testenv.WaitFor(t, 30*time.Second, "pull-2's ref reports gated waiting for the rollout", func() bool {
		rec := fleetRepo.Lookup("regatta-status/pull-2", "status/clusters/pull-2.yaml")
		return strings.Contains(rec, "state: Pending")
	})
	testenv.WaitFor(t, 30*time.Second, "the central status branch reports push-1's gated waiting for the rollout", func() bool {
		rec := fleetRepo.Lookup("regatta/status", "status/clusters/push-1.yaml")
		return strings.Contains(rec, "state: Pending") && strings.Contains(rec, "sourceRevision: "+v2)
	})
	for _, n := range []string{"pull-2", "push-1"} {
		if v := configMapVersion(t, clients[n], "gated-e2e", "gated"); v != "v1" {
			t.Fatalf("%s got gated %s while the canary pull-1 failed; want v1", n, v)
		}
	}

	// v3 fixes it: pull-1 first, then pull-2 once pull-1's ref shows it healthy.
	fleetRepo.Commit("v3", pullFleet(pushKC, "v3", false))
	testenv.WaitFor(t, 90*time.Second, "gated v3 on every cluster", func() bool {
		for _, n := range names {
			if configMapVersion(t, clients[n], "gated-e2e", "gated") != "v3" {
				return false
			}
		}
		return true
	})

	// An agent killed and restarted applies nothing.
	agents["pull-1"].kill(syscall.SIGKILL)
	agents["pull-1"] = startRegatta(t, "agent-pull-1", logDir, agentArgs("pull-1")...)
	testenv.WaitFor(t, 60*time.Second, "the restarted agent reconciled its cluster", agents["pull-1"].ready)
	if got, err := agents["pull-1"].applies(); err != nil || got["pull-1"] != 0 {
		t.Errorf("the restarted agent applied %v times (err %v), want 0", got, err)
	}

	// Agents for a pushed cluster, or a cluster not in the repository, are refused.
	out = runRegatta(t, ExitFailure, append([]string{"run", "--metrics-addr", "", "--once", "--cluster", "push-1", "--kubeconfig", kubeconfigs["push-1"]}, common...)...)
	if !strings.Contains(out, "cluster push-1 is not spec.mode: pull") {
		t.Errorf("the agent of push-1 was not refused with a clear message:\n%s", out)
	}
	if rec := fleetRepo.Lookup("regatta-status/push-1", "status/clusters/push-1.yaml"); !strings.Contains(strings.Join(strings.Fields(rec), " "), "not spec.mode: pull") {
		t.Errorf("the refused agent's status does not say why:\n%s\noutput:\n%s", rec, out)
	}
	out = runRegatta(t, ExitFailure, append([]string{"run", "--metrics-addr", "", "--once", "--cluster", "nowhere", "--kubeconfig", kubeconfigs["push-1"]}, common...)...)
	if !strings.Contains(out, "the repository has no cluster nowhere") {
		t.Errorf("the agent of a cluster not in the repository was not refused with a clear message:\n%s", out)
	}
	wantWriters(t, central, map[string]bool{"push-1": true})

	// pull-2 switched to push: its agent stops (exit 1, saying why) and the
	// central daemon takes the cluster over, re-applying nothing.
	v4 := pullFleet(pushKC, "v3", false)
	v4["clusters/pull-2/cluster.yaml"] = clusterYAML("pull-2", "push", "env: prod, gate: on")
	v4["clusters/pull-2/kubeconfig.yaml"] = kubeconfigSecretYAML("pull-2", env.Cluster("pull-2").Kubeconfig())
	rev4 := fleetRepo.Commit("v4: pull-2 pushed", v4)
	testenv.WaitFor(t, 30*time.Second, "pull-2's agent stopped", func() bool {
		select {
		case <-agents["pull-2"].done:
			return true
		default:
			return false
		}
	})
	if code := agents["pull-2"].cmd.ProcessState.ExitCode(); code != ExitFailure {
		t.Errorf("pull-2's agent exited %d, want %d", code, ExitFailure)
	}
	if b, _ := os.ReadFile(filepath.Join(logDir, "agent-pull-2.log")); !strings.Contains(string(b), "cluster pull-2 is not spec.mode: pull") {
		t.Errorf("pull-2's agent log does not say why it stopped")
	}
	testenv.WaitFor(t, 60*time.Second, "the central daemon reconciled pull-2 at v4", func() bool {
		rec := fleetRepo.Lookup("regatta/status", "status/clusters/pull-2.yaml")
		return strings.Contains(rec, "sourceRevision: "+rev4) && !strings.Contains(rec, "mode: pull") && !strings.Contains(rec, "state: Progressing") &&
			strings.Count(rec, "state: Applied") == 2
	})
	if got, err := central.applies(); err != nil || got["pull-2"] != 0 {
		t.Errorf("taking pull-2 over, the central daemon applied %v (err %v), want nothing", got, err)
	}
}

// requestsBy counts the requests regatta processes sent to a cluster, by
// user agent (regatta: the central daemon; regatta/agent-<cluster>: an
// agent).
func requestsBy(t *testing.T, c *testenv.Cluster) map[string]int {
	t.Helper()
	events, err := testenv.ReadAuditLog(c.AuditLog())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range events {
		if e.UserAgent == "regatta" || strings.HasPrefix(e.UserAgent, "regatta/") {
			out[e.UserAgent]++
		}
	}
	return out
}

// ExitFailure is the exit code of a failed command.
const ExitFailure = 1

// wantWriters checks that a process applied to the given clusters and to
// no other.
func wantWriters(t *testing.T, p *process, want map[string]bool) {
	t.Helper()
	got, err := p.applies()
	if err != nil {
		t.Fatal(err)
	}
	for c, n := range got {
		if n > 0 && !want[c] {
			t.Errorf("%s applied %v times to %s", p.id, n, c)
		}
	}
	for c := range want {
		if got[c] == 0 {
			t.Errorf("%s applied nothing to %s", p.id, c)
		}
	}
}

// runRegatta runs the regatta command to its end and returns its output;
// the test fails unless it exits with code.
func runRegatta(t *testing.T, code int, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), execAsRegatta+"=1")
	out, _ := cmd.CombinedOutput()
	if got := cmd.ProcessState.ExitCode(); got != code {
		t.Fatalf("regatta %s exited %d, want %d:\n%s", strings.Join(args, " "), got, code, out)
	}
	return string(out)
}
