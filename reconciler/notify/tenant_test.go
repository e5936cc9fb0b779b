package notify

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// tenantFleet is a repository with a platform profile web and tenant
// team's profile team-web, team reaching cluster a only, and an alert of
// the platform and one of the tenant, both naming no profile.
func tenantFleet(t *testing.T) []*spec.Alert {
	t.Helper()
	doc := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	cluster := func(name, env string) *fstest.MapFile {
		return doc("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: " + name + ", labels: {env: " + env + "}}\n")
	}
	alertDoc := "apiVersion: regatta.dev/v1alpha1\nkind: Alert\nmetadata: {name: ops}\nspec:\n  on: [Failed, ClusterUnreachable, RevisionRefused]\n  unreachableFor: 1s\n  notifications:\n  - {name: chat, type: slack, secretRef: {name: team-slack}}\n"
	fsys := fstest.MapFS{
		"clusters/a/cluster.yaml": cluster("a", "prod"),
		"clusters/b/cluster.yaml": cluster("b", "dev"),
		"profiles/web.yaml":       doc("apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: web}\nspec:\n  clusterRefs: [a, b]\n  addons:\n  - {name: x, manifests: {path: web}}\n"),
		"web/cm.yaml":             doc("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: default}\n"),
		"tenants/team/tenant.yaml": doc("apiVersion: regatta.dev/v1alpha1\nkind: Tenant\nmetadata: {name: team}\nspec:\n  clusters: {names: [a]}\n  namespaces: [team]\n" +
			"  kinds: [{kind: ConfigMap}]\n  notificationSecrets: [team-slack]\n"),
		"tenants/team/profiles/team-web.yaml": doc("apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: team-web}\nspec:\n  clusterRefs: [a]\n  addons:\n  - {name: x, manifests: {path: tenants/team/app}}\n"),
		"tenants/team/app/cm.yaml":            doc("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: team}\n"),
		"tenants/team/alerts/ops.yaml":        doc(alertDoc),
		"alerts/ops.yaml":                     doc(alertDoc),
	}
	repo, diags := spec.Load(fsys)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	if len(repo.Alerts) != 2 || repo.Alerts[0].ID() != "ops" || repo.Alerts[1].ID() != "team/ops" {
		t.Fatalf("alerts %v", repo.Alerts)
	}
	return repo.Alerts
}

// TestTenantAlertSeesItsOwnOnly: a tenant's alert tells of its own
// profiles on the clusters it may reach, and of the fleet only its own
// refusal; the platform's alert of the same name tells of everything.
func TestTenantAlertSeesItsOwnOnly(t *testing.T) {
	alerts := tenantFleet(t)
	rev := strings.Repeat("ab", 20)
	failed := func(name string) status.Profile {
		return status.Profile{Name: name, State: status.StateFailed, Revision: rev, Error: &status.Error{Message: "boom"}}
	}
	snap := status.Snapshot{Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: "old",
		Errors:         []status.Error{{File: "profiles/web.yaml", Line: 3, Message: "broken"}},
		RefusedTenants: []status.RefusedTenant{{Tenant: "other", Errors: []status.Error{{Message: "x"}}}}}}
	snap.Clusters = []status.ClusterStatus{
		{Cluster: "a", SourceRevision: rev, Reachable: true, Labels: map[string]string{"env": "prod"}, Profiles: []status.Profile{failed("web"), failed("team-web")}},
		{Cluster: "b", SourceRevision: rev, Reachable: false, Error: "cannot reach b", Labels: map[string]string{"env": "dev"}, Profiles: []status.Profile{failed("web")}},
	}
	c, b := &clock{t: time.Unix(1e9, 0)}, &inbox{}
	n := newTestNotifier(NewMemoryLedger(), c, b, alerts...)
	n.Step(context.Background(), snap)
	c.advance(time.Minute)
	n.Step(context.Background(), snap)
	got := map[string][]string{}
	for _, m := range b.take() {
		got[m.Alert] = append(got[m.Alert], m.Kind+":"+m.Profile+":"+strings.Join(m.Clusters, ","))
	}
	if want := []string{"Failed:team-web:a"}; strings.Join(got["team/ops"], " ") != strings.Join(want, " ") {
		t.Errorf("the tenant's alert told %v, want %v", got["team/ops"], want)
	}
	platform := strings.Join(got["ops"], " ")
	for _, want := range []string{"Failed:web:a,b", "Failed:team-web:a", "RevisionRefused::", "RevisionRefused:tenant:other:"} {
		if !strings.Contains(platform, want) {
			t.Errorf("the platform's alert lacks %s: %v", want, got["ops"])
		}
	}
}
