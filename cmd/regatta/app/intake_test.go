package app

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/reconciler/status"
)

const intakeTenant = "apiVersion: regatta.dev/v1alpha1\nkind: Tenant\nmetadata: {name: team-a}\nspec:\n  clusters: {names: [c1]}\n  namespaces: [team-a]\n  kinds: [{kind: ConfigMap}]\n"

func intakeProfile(name, path, extra string) string {
	return "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n  clusterRefs: [c1]\n" + extra +
		"  addons:\n  - name: x\n    manifests: {path: " + path + "}\n"
}

// intakeBase is a fleet of one cluster (never reached: the intake needs
// none), a platform profile and tenant team-a with one profile.
func intakeBase() map[string]string {
	return map[string]string{
		"clusters/c1/cluster.yaml":           "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: {paused: true}\n",
		"profiles/base.yaml":                 intakeProfile("base", "base", ""),
		"base/cm.yaml":                       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base, namespace: default}\n",
		"tenants/team-a/tenant.yaml":         intakeTenant,
		"tenants/team-a/profiles/a-app.yaml": intakeProfile("a-app", "tenants/team-a/app", ""),
		"tenants/team-a/app/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: team-a}\n",
	}
}

// TestValidateAgreesWithDaemonIntake: for a table of revisions, what
// `regatta validate` says the daemon does (take the revision or keep it
// out, which tenants it refuses) is what `regatta run --once` does with
// it, read back from the status branch it commits.
func TestValidateAgreesWithDaemonIntake(t *testing.T) {
	tests := []struct {
		name     string
		change   map[string]string
		admitted bool
		refused  []string
	}{
		{"valid", nil, true, nil},
		{"platform profile unknown field", map[string]string{"profiles/base.yaml": intakeProfile("base", "base", "  colour: blue\n")}, false, nil},
		{"cluster unknown field", map[string]string{"clusters/c1/cluster.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: {pasued: true}\n"}, false, nil},
		{"tenant profile unknown field", map[string]string{"tenants/team-a/profiles/a-app.yaml": intakeProfile("a-app", "tenants/team-a/app", "  colour: blue\n")}, true, []string{"team-a"}},
		{"tenant.yaml unknown field", map[string]string{"tenants/team-a/tenant.yaml": intakeTenant + "  colour: blue\n"}, true, []string{"team-a"}},
		{"tenant profile depends on nothing", map[string]string{"tenants/team-a/profiles/a-app.yaml": intakeProfile("a-app", "tenants/team-a/app", "  dependsOn: [missing]\n")}, true, []string{"team-a"}},
		{"tenant path leaves its folder", map[string]string{"tenants/team-a/profiles/a-app.yaml": intakeProfile("a-app", "base", "")}, true, []string{"team-a"}},
		{"tenant and platform broken", map[string]string{"tenants/team-a/tenant.yaml": intakeTenant + "  colour: blue\n", "profiles/base.yaml": intakeProfile("base", "missing", "")}, false, nil},
		// render-time refusals fail pairs, never the revision
		{"tenant object outside its namespaces", map[string]string{"tenants/team-a/app/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: kube-system}\n"}, true, nil},
		{"template parse error", map[string]string{"profiles/base.yaml": intakeProfile("base", "base", "") + "    template: true\n", "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Cluster.Name ', namespace: default}\n"}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, intakeBase())
			writeFiles(t, dir, tt.change)
			git(t, dir, "init", "-q", "-b", "main")
			git(t, dir, "add", ".")
			git(t, dir, "commit", "-qm", "revision")

			_, stdout, stderr := run(t, "validate", "-o", "json", dir)
			var v validateReport
			if err := json.Unmarshal([]byte(stdout), &v); err != nil {
				t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
			}
			run(t, "run", "--once", "--repo", dir, "--metrics-addr", "", "--helm-cache-dir", t.TempDir(), "--log-level", "error")
			fleet := branchFleet(t, dir)
			head := gitOut(t, dir, "rev-parse", "HEAD")
			daemonAdmitted := fleet.AppliedRevision == head
			var daemonRefused []string
			for _, rt := range fleet.RefusedTenants {
				daemonRefused = append(daemonRefused, rt.Tenant)
			}
			if v.Admitted != daemonAdmitted || !slices.Equal(v.RefusedTenants, nonNilStrings(daemonRefused)) {
				t.Fatalf("validate: admitted %v, refused %v; daemon: admitted %v, refused %v\nvalidate: %s\nfleet: %+v",
					v.Admitted, v.RefusedTenants, daemonAdmitted, daemonRefused, stdout, fleet)
			}
			if v.Admitted != tt.admitted || !slices.Equal(v.RefusedTenants, nonNilStrings(tt.refused)) {
				t.Errorf("both say admitted %v, refused %v; want %v, %v", v.Admitted, v.RefusedTenants, tt.admitted, tt.refused)
			}
		})
	}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

func branchFleet(t *testing.T, dir string) status.Fleet {
	t.Helper()
	var f status.Fleet
	if err := yaml.Unmarshal([]byte(gitOut(t, dir, "show", "regatta/status:"+status.FleetFile)), &f); err != nil {
		t.Fatal(err)
	}
	return f
}
