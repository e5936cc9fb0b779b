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
