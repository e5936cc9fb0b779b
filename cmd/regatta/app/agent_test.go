package app

import (
	"strings"
	"testing"
)

// TestAgentFlagsRefuseWhatAnAgentCannotDo: agent mode (--cluster) reads no
// kubeconfig Secrets, does not shard, writes status to its own ref only,
// and outside a pod needs --kubeconfig; --kubeconfig needs --cluster.
func TestAgentFlagsRefuseWhatAnAgentCannotDo(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster", "edge-1", "--management-kubeconfig", "in-cluster"}, "drop --management-kubeconfig"},
		{[]string{"--cluster", "edge-1", "--replicas-mode", "shard"}, "does not combine with --replicas-mode shard"},
		{[]string{"--cluster", "edge-1", "--status-branch", "regatta/status"}, "commits status to regatta-status/edge-1 only"},
		{[]string{"--cluster", "edge-1"}, "runs inside its cluster"},
		{[]string{"--cluster", "edge-1", "--kubeconfig", "/nonexistent"}, "--kubeconfig: open /nonexistent"},
		{[]string{"--kubeconfig", "/nonexistent"}, "needs --cluster"},
		{[]string{"--cluster", "../main"}, "is not a cluster name"},
		{[]string{"--status-git-username", "agent-edge-1"}, "--status-git-username needs --status-git-password-file"},
		{[]string{"--status-git-password-file", "/nonexistent"}, "--status-git-password-file: open /nonexistent"},
	} {
		t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod
		code, _, stderr := run(t, append([]string{"run", "--repo", t.TempDir(), "--metrics-addr", ""}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tt.args, code, ExitUsage, tt.want, stderr)
		}
	}
}

// TestCentralDaemonWarnsOfForeignRecords: the central daemon reads a
// pulled cluster's record from its agent's ref and ignores, with the
// warning docs/operations.md promises on its log, the records of other
// clusters that ref holds.
func TestCentralDaemonWarnsOfForeignRecords(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/edge-1/cluster.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: edge-1}\nspec: {mode: pull}\n",
	})
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "fleet")
	git(t, dir, "checkout", "-q", "--orphan", "regatta-status/edge-1")
	git(t, dir, "rm", "-rqf", ".")
	writeFiles(t, dir, map[string]string{
		"status/clusters/edge-1.yaml": "cluster: edge-1\nreachable: true\n",
		"status/clusters/prod-1.yaml": "cluster: prod-1\nreachable: true\n",
	})
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "edge-1's agent, writing another cluster's record")
	git(t, dir, "checkout", "-q", "main")
	_, stdout, stderr := run(t, "run", "--once", "--repo", dir, "--metrics-addr", "", "--log-level", "warn")
	if !strings.Contains(stderr, "an agent's status ref holds records of other clusters; ignored") ||
		!strings.Contains(stderr, "ref=regatta-status/edge-1") || !strings.Contains(stderr, "status/clusters/prod-1.yaml") {
		t.Errorf("no warning naming the ref and the foreign record:\n%s\n%s", stdout, stderr)
	}
	if n := strings.Count(stderr, "holds records of other clusters"); n != 1 {
		t.Errorf("warned %d times of one ref at one revision, want once:\n%s", n, stderr)
	}
}
