package app

import (
	"strings"
	"testing"
)

// TestReplicasModeFlags: a wrong mode and a sharded run without a
// management cluster are usage errors.
func TestReplicasModeFlags(t *testing.T) {
	repo := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--replicas-mode", "bogus"}, "--replicas-mode must be standby or shard"},
		{[]string{"--replicas-mode", "shard"}, "needs --management-kubeconfig"},
	} {
		args := append([]string{"run", "--repo", repo, "--metrics-addr", ""}, tt.args...)
		code, _, stderr := run(t, args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %s", tt.args, code, stderr)
		}
	}
}
