package e2e

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
)

// switchBulk is how many ConfigMaps the first add-on of the switching
// cluster holds: enough for a pass to be stopped mid-way.
const switchBulk = 300

// switchFleet is one cluster, sw-1, in the given mode, with a profile of
// two add-ons: bulk (switchBulk ConfigMaps) then probe (one), all at
// version.
func switchFleet(kubeconfig []byte, version, mode string) map[string]string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: switch-e2e}\n")
	for i := range switchBulk {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: bulk-%d, namespace: switch-e2e}\ndata: {version: %s}\n", i, version)
	}
	return map[string]string{
		"clusters/sw-1/cluster.yaml":    clusterYAML("sw-1", mode, "env: prod"),
		"clusters/sw-1/kubeconfig.yaml": kubeconfigSecretYAML("sw-1", kubeconfig),
		"profiles/switch.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: switch}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: bulk
    manifests: {path: switch/bulk}
  - name: probe
    manifests: {path: switch/probe}
`,
		"switch/bulk/objects.yaml":  b.String(),
		"switch/probe/objects.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe, namespace: switch-e2e}\ndata: {version: " + version + "}\n",
	}
}

// TestModeSwitchNeverTwoWriters switches a cluster push -> pull while the
// central daemon is stopped (SIGSTOP) in the middle of a pass, and pull ->
// push while the agent is stopped in the middle of one: the process that
// takes the cluster over must wait for the other's release, which comes
// only after its pass ended, so the API server's audit log shows every
// write of the one before the first write of the other. Then an agent
// gone for good: the central daemon waits for its release, says so, and
// takes the cluster once `regatta release-agent` records it.
func TestModeSwitchNeverTwoWriters(t *testing.T) {
	log.SetOutput(io.Discard) // the Git server logs every request
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	env := testenv.StartT(t, testenv.Options{AuditLog: true, Clusters: []testenv.ClusterOptions{{Name: "sw-1"}}})
	c := env.Cluster("sw-1")
	client, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kc := filepath.Join(dir, "sw-1.kubeconfig")
	pw := filepath.Join(dir, "git-password")
	if err := os.WriteFile(kc, c.Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pw, []byte(gitfleet.Password), 0o600); err != nil {
		t.Fatal(err)
	}
	logDir := logDirOr(dir)
	fleetRepo := gitfleet.New(t)
	git := []string{"--repo", fleetRepo.URL, "--git-username", gitfleet.User, "--git-password-file", pw}
	common := append([]string{"--interval", "500ms", "--status-interval", "1s", "--leader-elect=false"}, git...)
	commit := func(version, mode string) { fleetRepo.Commit(version, switchFleet(c.Kubeconfig(), version, mode)) }
	at := func(name string) string { return configMapVersion(t, client, "switch-e2e", name) }
	record := func(branch string) string {
		return strings.Join(strings.Fields(fleetRepo.Lookup(branch, "status/clusters/sw-1.yaml")), " ")
	}

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("central record:\n%s\nagent record:\n%s", fleetRepo.Lookup("regatta/status", "status/clusters/sw-1.yaml"), fleetRepo.Lookup("regatta-status/sw-1", "status/clusters/sw-1.yaml"))
		}
	})
	commit("v1", "push")
	central := startRegatta(t, "central", logDir, common...)
	testenv.WaitFor(t, 60*time.Second, "v1 on sw-1", func() bool { return at("probe") == "v1" })

	// push -> pull, the central daemon stopped mid-pass.
	from := time.Now()
	stopped := midPass(t, []kubernetes.Interface{client}, "switch-e2e", "v2", func() { central.signal(syscall.SIGSTOP) })
	commit("v2", "push")
	stopped()
	commit("v3", "pull")
	agent := startRegatta(t, "agent-sw-1", logDir, append([]string{"--cluster", "sw-1", "--kubeconfig", kc}, common...)...)
	testenv.WaitFor(t, 60*time.Second, "the agent waiting for the central daemon's release (or writing)", func() bool {
		return strings.Contains(record("regatta-status/sw-1"), "waiting for the central daemon to hand over") || at("bulk-0") == "v3"
	})
	resumed := time.Now()
	central.signal(syscall.SIGCONT)
	testenv.WaitFor(t, 90*time.Second, "v3 on sw-1, every object", func() bool { return allAt(t, client, "v3") })
	switched := time.Now()
	wantOneThenOther(t, c, from, switched, resumed, "regatta", "regatta/agent-sw-1")

	// pull -> push, the agent stopped mid-pass.
	stopped = midPass(t, []kubernetes.Interface{client}, "switch-e2e", "v4", func() { agent.signal(syscall.SIGSTOP) })
	commit("v4", "pull")
	stopped()
	commit("v5", "push")
	testenv.WaitFor(t, 60*time.Second, "the central daemon waiting for the agent's release (or writing)", func() bool {
		return strings.Contains(record("regatta/status"), "waits for the agent") || at("bulk-0") == "v5"
	})
	resumed = time.Now()
	agent.signal(syscall.SIGCONT)
	testenv.WaitFor(t, 90*time.Second, "v5 on sw-1, every object", func() bool { return allAt(t, client, "v5") })
	wantOneThenOther(t, c, switched, time.Now(), resumed, "regatta/agent-sw-1", "regatta")
	<-agent.done // it stopped, having released the cluster
	if rec := record("regatta-status/sw-1"); !strings.Contains(rec, "handover: turn: 2") {
		t.Errorf("the agent's last record does not release the cluster (turn 2):\n%s", rec)
	}

	// An agent gone for good: pull without an agent, then push again.
	commit("v6", "pull")
	testenv.WaitFor(t, 60*time.Second, "the central daemon released sw-1 (turn 3)", func() bool {
		return strings.Contains(record("regatta/status"), "handover: turn: 3")
	})
	commit("v7", "push")
	testenv.WaitFor(t, 60*time.Second, "the central daemon says it waits for the agent's release", func() bool {
		rec := record("regatta/status")
		return strings.Contains(rec, "waits for the agent") && strings.Contains(rec, "regatta release-agent --cluster sw-1")
	})
	if v := at("probe"); v != "v5" {
		t.Fatalf("sw-1 changed to %s while nobody held it", v)
	}
	out := runRegatta(t, 0, append([]string{"release-agent", "--cluster", "sw-1"}, git...)...)
	if !strings.Contains(out, "released to the central daemon (turn 4") {
		t.Errorf("release-agent:\n%s", out)
	}
	testenv.WaitFor(t, 60*time.Second, "v7 on sw-1 by the central daemon", func() bool { return at("probe") == "v7" })
	out = runRegatta(t, 0, append([]string{"release-agent", "--cluster", "sw-1"}, git...)...)
	if !strings.Contains(out, "nothing to release: the central daemon holds it (turn 4)") {
		t.Errorf("release-agent with the central daemon holding the cluster:\n%s", out)
	}
}

// signal sends sig to the process.
func (p *process) signal(sig syscall.Signal) {
	if err := p.cmd.Process.Signal(sig); err != nil {
		panic(err)
	}
}

// allAt reports whether every ConfigMap of the test is at version.
func allAt(t *testing.T, c kubernetes.Interface, version string) bool {
	t.Helper()
	cms, err := c.CoreV1().ConfigMaps("switch-e2e").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, cm := range cms.Items {
		if _, ok := cm.Data["version"]; !ok {
			continue
		}
		if cm.Data["version"] != version {
			return false
		}
		n++
	}
	return n == switchBulk+1
}

// wantOneThenOther checks, from the cluster's audit log, that in
// [from, to) every write of first was answered before the first write of
// second was received, and that first was still writing after resumed
// (its pass was in flight across the switch: the test tested something).
func wantOneThenOther(t *testing.T, c *testenv.Cluster, from, to, resumed time.Time, first, second string) {
	t.Helper()
	events, err := testenv.ReadAuditLog(c.AuditLog())
	if err != nil {
		t.Fatal(err)
	}
	var lastFirst, firstSecond time.Time
	afterResume := 0
	for _, e := range events {
		at := e.RequestReceivedTimestamp
		if at.Before(from) || !at.Before(to) || !isWrite(e) {
			continue
		}
		switch e.UserAgent {
		case first:
			if e.StageTimestamp.After(lastFirst) {
				lastFirst = e.StageTimestamp
			}
			if at.After(resumed) {
				afterResume++
			}
		case second:
			if firstSecond.IsZero() || at.Before(firstSecond) {
				firstSecond = at
			}
		}
	}
	switch {
	case lastFirst.IsZero() || firstSecond.IsZero():
		t.Errorf("writes of %s (last %v) or %s (first %v) missing", first, lastFirst, second, firstSecond)
	case !lastFirst.Before(firstSecond):
		t.Errorf("two writers: %s wrote until %s, %s began at %s", first, lastFirst.Format(time.RFC3339Nano), second, firstSecond.Format(time.RFC3339Nano))
	}
	t.Logf("%s: last write answered %s; %s: first write received %s; %d writes of %s after it was resumed",
		first, lastFirst.Format(time.RFC3339Nano), second, firstSecond.Format(time.RFC3339Nano), afterResume, first)
	if afterResume == 0 {
		t.Errorf("%s wrote nothing after it was resumed: its pass was not in flight across the switch", first)
	}
}

// isWrite reports a request that changes the cluster (dry runs aside).
func isWrite(e testenv.AuditEvent) bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return !strings.Contains(e.RequestURI, "dryRun=")
	}
	return false
}
