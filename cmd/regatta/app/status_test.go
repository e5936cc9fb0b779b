package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/reconciler/status"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// statusRepo makes a real Git repository whose regatta/status branch holds
// the files of snap.
func statusRepo(t *testing.T, snap status.Snapshot) string {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("fleet\n"), 0o644)
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "init")
	git(t, dir, "checkout", "-q", "--orphan", DefaultStatusBranch)
	git(t, dir, "rm", "-rfq", ".")
	files, err := status.Files(snap)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, b, 0o644)
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "status")
	git(t, dir, "checkout", "-q", "main")
	return dir
}

func TestStatusCommand(t *testing.T) {
	snap := status.Snapshot{
		Fleet: status.Fleet{SourceRevision: "0123456789abcdef", AppliedRevision: "0123456789abcdef"},
		Clusters: []status.ClusterStatus{{
			Cluster: "prod-1", Reachable: true, KubernetesVersion: "v1.37.2", Labels: map[string]string{"env": "prod"},
			Profiles: []status.Profile{
				{Name: "apps", State: status.StateFailed, Revision: "0123456789abcdef",
					Error: &status.Error{Object: "Deployment/apps/web", Message: "apply failed: denied"}},
				{Name: "infra", State: status.StateApplied, Revision: "0123456789abcdef", Objects: 4},
			},
		}},
	}
	dir := statusRepo(t, snap)
	code, stdout, stderr := run(t, "status", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"source revision 01234567", "prod-1   true", "Deployment/apps/web: apply failed: denied", "infra    Applied"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = run(t, "status", "--cluster", "prod-1", dir)
	if code != 0 || !strings.Contains(stdout, "labels: env=prod") || !strings.Contains(stdout, "profile infra: Applied revision=01234567 objects=4") {
		t.Errorf("cluster view (%d):\n%s", code, stdout)
	}
	if code, _, _ = run(t, "status", "--cluster", "ghost", dir); code != 1 {
		t.Errorf("unknown cluster: exit %d", code)
	}
	code, stdout, _ = run(t, "status", "-o", "markdown", dir)
	if code != 0 || !strings.Contains(stdout, "| prod-1 | yes | v1.37.2 |") {
		t.Errorf("markdown (%d):\n%s", code, stdout)
	}
}

func TestStatusWithoutStatusBranch(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	code, _, stderr := run(t, "status", dir)
	if code != 1 || !strings.Contains(stderr, "no status branch regatta/status") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if code, _, _ := run(t, "status", t.TempDir()); code != 2 {
		t.Errorf("not a repository: exit %d", code)
	}
}

// TestStatusShowsOwners: when replicas share the fleet, the table and the
// cluster view name the replica that owns each cluster.
func TestStatusShowsOwners(t *testing.T) {
	rev := "0123456789abcdef"
	snap := status.Snapshot{
		Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: rev},
		Clusters: []status.ClusterStatus{
			{Cluster: "prod-1", Owner: "regatta-0", Reachable: true, Profiles: []status.Profile{{Name: "apps", State: status.StateApplied, Revision: rev}}},
			{Cluster: "prod-2", Owner: "regatta-2", Reachable: true},
		},
	}
	dir := statusRepo(t, snap)
	code, stdout, stderr := run(t, "status", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"CLUSTER  OWNER      REACHABLE", "prod-1   regatta-0  true", "prod-2   regatta-2  true"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = run(t, "status", "--cluster", "prod-2", dir)
	if code != 0 || !strings.Contains(stdout, "owner: replica regatta-2") {
		t.Errorf("cluster view (%d):\n%s", code, stdout)
	}
	code, stdout, _ = run(t, "status", "-o", "markdown", dir)
	if code != 0 || !strings.Contains(stdout, "| prod-1 (regatta-0) | yes |") {
		t.Errorf("markdown (%d):\n%s", code, stdout)
	}
}

// TestStatusShowsRefusedTenants: a tenant whose folder does not load is
// named with its errors in the terminal view, as on the dashboard.
func TestStatusShowsRefusedTenants(t *testing.T) {
	snap := status.Snapshot{Fleet: status.Fleet{SourceRevision: "0123456789abcdef", AppliedRevision: "0123456789abcdef",
		RefusedTenants: []status.RefusedTenant{{Tenant: "team-a", Errors: []status.Error{
			{File: "tenants/team-a/profiles/app.yaml", Line: 7, Message: `spec.colour: unknown field "colour"`}}}}}}
	code, stdout, stderr := run(t, "status", statusRepo(t, snap))
	if code != 0 || !strings.Contains(stdout, `tenant team-a refused: tenants/team-a/profiles/app.yaml:7: spec.colour: unknown field "colour"`) {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestStatusShowsSignatureCheck: the terminal view names the key that
// signed the revision in force, and a refused revision's commit, key and
// reason (as one of the errors that keep it out).
func TestStatusShowsSignatureCheck(t *testing.T) {
	snap := status.Snapshot{Fleet: status.Fleet{SourceRevision: "0123456789abcdef", AppliedRevision: "0123456789abcdef",
		Verification: &status.Verification{Accepted: true, Mode: "every", Commit: "0123456789abcdef", Key: "SHA256:abc", Signer: "alice@example.com"}}}
	code, stdout, stderr := run(t, "status", statusRepo(t, snap))
	if code != 0 || !strings.Contains(stdout, "signature check (every): accepted, signed by SHA256:abc alice@example.com") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	refused := "signature check: commit fedcba987654 refused: Unsigned"
	snap.Fleet.SourceRevision, snap.Fleet.Errors = "fedcba9876543210", []status.Error{{Message: refused}}
	snap.Fleet.Verification = &status.Verification{Mode: "every", Commit: "fedcba9876543210", Reason: "Unsigned", Message: refused}
	code, stdout, stderr = run(t, "status", statusRepo(t, snap))
	if code != 0 || !strings.Contains(stdout, "invalid: "+refused) {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestStatusShowsRollouts: the terminal table shows each rollout's stage,
// whether it halted or waits for approval, why, and what to do next, as
// the Markdown dashboard does.
func TestStatusShowsRollouts(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	snap := status.Snapshot{
		Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: rev, Rollouts: []status.RolloutStatus{
			{Profile: "api", Revision: rev, Stage: "prod", Reason: "stage prod waits for approval: rollouts/<profile>.yaml approvals: [{stage: prod, revision: 01234567}]",
				Stages: []status.StageStatus{{Name: "canary", Progress: "Done", Done: 1}, {Name: "prod", Progress: "AwaitingApproval", Waiting: 3}}},
			{Profile: "web", Revision: rev, Stage: "canary", Halted: true, Reason: "halted: prod-1 failed (failureThreshold 1)",
				Stages: []status.StageStatus{{Name: "canary", Progress: "Halted", Failed: 1}, {Name: "prod", Progress: "Waiting", Waiting: 3}}},
		}},
		Clusters: []status.ClusterStatus{{Cluster: "prod-1", Reachable: true}},
	}
	dir := statusRepo(t, snap)
	code, stdout, stderr := run(t, "status", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"api at revision 01234567: stage prod AwaitingApproval (1 done, 0 updating, 3 waiting)",
		"next: approve by committing rollouts/api.yaml with approvals: [{stage: prod, revision: " + rev + "}]",
		"web at revision 01234567: stage canary Halted (0 done, 0 updating, 3 waiting, 1 failed)",
		"why: halted: prod-1 failed (failureThreshold 1)",
		"next: commit a fix or a revert of profile web",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, stdout)
		}
	}
}

// TestStatusDropsEscapeSequences: `regatta status` (table, one cluster,
// Markdown) prints no ANSI escape sequence or other control character a
// tenant wrote into its status texts, and keeps the text around it.
func TestStatusDropsEscapeSequences(t *testing.T) {
	const hostile = "\x1b[2J\x1b[31mfailed\x1b[0m \x1b]0;pwned\x07here\u202e"
	snap := status.Snapshot{
		Fleet: status.Fleet{SourceRevision: "0123456789abcdef",
			RefusedTenants: []status.RefusedTenant{{Tenant: "t1", Errors: []status.Error{{File: "tenants/t1/tenant.yaml", Message: hostile}}}}},
		Clusters: []status.ClusterStatus{{Cluster: "prod-1", Reachable: true, Error: hostile,
			Profiles: []status.Profile{{Name: "apps", Tenant: "t1", State: status.StateFailed, Message: hostile,
				Error: &status.Error{Object: "ConfigMap/t1/x", Message: hostile}}}}},
	}
	dir := statusRepo(t, snap)
	for _, args := range [][]string{{"status", dir}, {"status", "--cluster", "prod-1", dir}, {"status", "-o", "markdown", dir}} {
		code, stdout, stderr := run(t, args...)
		if code != 0 || strings.ContainsAny(stdout, "\x1b\x07\u202e") || strings.Contains(stdout, "pwned") || !strings.Contains(stdout, "failed here") {
			t.Errorf("%v: exit %d, escapes left or text lost:\n%q\n%s", args, code, stdout, stderr)
		}
	}
}

// TestStatusShowsHealthChecks: a cluster's alert health checks are in its
// detailed view and among the dashboard's problems (degraded, or failed
// to run).
func TestStatusShowsHealthChecks(t *testing.T) {
	rev := "0123456789abcdef"
	snap := status.Snapshot{
		Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: rev},
		Clusters: []status.ClusterStatus{{Cluster: "prod-1", Reachable: true, HealthChecks: []status.HealthCheck{
			{Alert: "pods", Check: "crashing-pod", Objects: 12, Degraded: 1,
				Resources: []status.ResourceHealth{{Object: "Pod web/api-0", Status: "Degraded", Message: "back-off restarting"}}},
			{Alert: "pods", Check: "broken", Error: "alerts/pods.yaml spec.healthChecks[1].script:2: attempt to index a nil value"},
		}}},
	}
	dir := statusRepo(t, snap)
	code, stdout, stderr := run(t, "status", "--cluster", "prod-1", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"health check pods/crashing-pod: 12 objects, 1 Degraded", "Degraded Pod web/api-0: back-off restarting",
		"health check pods/broken: error: alerts/pods.yaml spec.healthChecks[1].script:2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("cluster view lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = run(t, "status", "-o", "markdown", dir)
	for _, want := range []string{"- **prod-1**: health check `crashing-pod` of alert `pods`: 1 Degraded, first `Pod web/api-0` (back-off restarting)",
		"- **prod-1**: health check `broken` of alert `pods` could not run: alerts/pods.yaml"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("dashboard (%d) lacks %q:\n%s", code, want, stdout)
		}
	}
}
