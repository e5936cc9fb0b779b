package reconciler

import (
	"context"
	"regexp"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/reconciler/status"
)

func tenantYAML(name, clusters, namespaces, kinds string) string {
	return "apiVersion: regatta.dev/v1alpha1\nkind: Tenant\nmetadata: {name: " + name + "}\nspec:\n  clusters: " + clusters +
		"\n  namespaces: " + namespaces + "\n  kinds: " + kinds + "\n"
}

func tenantConfigMap(ns, name, value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + ns + "}\ndata: {v: \"" + value + "\"}\n"
}

// tenantFleetFiles: a platform profile creating the tenants' namespaces on
// three clusters; team-a reaches c35 and c36 (its profile selects all
// three), team-b reaches c36 and c37 by a selector.
func tenantFleetFiles(t *testing.T, prefix string) map[string]string {
	a, b := prefix+"-a", prefix+"-b"
	files := map[string]string{
		"profiles/" + prefix + "-platform.yaml":         profileYAML(prefix+"-platform", "fleet: demo", "  tier: 10\n  addons:\n  - name: ns\n    manifests: {path: platform}\n"),
		"platform/ns.yaml":                              "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + a + "}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: " + b + "}\n",
		"tenants/" + a + "/tenant.yaml":                 tenantYAML(a, "{names: [c35, c36]}", "["+a+"]", "[{kind: ConfigMap}]"),
		"tenants/" + a + "/profiles/" + a + "-app.yaml": profileYAML(a+"-app", "fleet: demo", "  dependsOn: ["+prefix+"-platform]\n  addons:\n  - name: app\n    manifests: {path: tenants/"+a+"/app}\n"),
		"tenants/" + a + "/app/cm.yaml":                 tenantConfigMap(a, "app", "one"),
		"tenants/" + b + "/tenant.yaml":                 tenantYAML(b, "{selector: {matchLabels: {team-b: \"yes\"}}}", "["+b+"]", "[{kind: ConfigMap}]"),
		"tenants/" + b + "/profiles/" + b + "-app.yaml": profileYAML(b+"-app", "fleet: demo", "  dependsOn: ["+prefix+"-platform]\n  addons:\n  - name: app\n    manifests: {path: tenants/"+b+"/app}\n"),
		"tenants/" + b + "/app/cm.yaml":                 tenantConfigMap(b, "app", "one"),
	}
	for name, labels := range map[string]string{"c35": "fleet: demo", "c36": "fleet: demo, team-b: \"yes\"", "c37": "fleet: demo, team-b: \"yes\""} {
		for k, v := range clusterFiles(t, name, labels) {
			files[k] = v
		}
	}
	return files
}

func forbiddenObjects(prefix string) string {
	return "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: " + prefix + "-evil}\nrules: []\n---\n" +
		tenantConfigMap("kube-system", prefix+"-sys", "x") + "---\n" + tenantConfigMap(prefix+"-b", prefix+"-steal", "x")
}

// TestTenantRefusedByDaemon: a tenant profile that adds a ClusterRole, an
// object in kube-system and one in the other tenant's namespace is refused
// by the daemon before anything is applied; the profile's other objects
// stay as they were; the other tenant and the platform are unaffected; and
// a tenant's profile never reaches a cluster outside its tenant.
func TestTenantRefusedByDaemon(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	files := tenantFleetFiles(t, "tr")
	// the platform owns a ConfigMap in team a's namespace; team a's
	// profile of a lower tier renders it too, and must not take it over
	files["platform/owned.yaml"] = tenantConfigMap("tr-a", "owned", "platform")
	files["tenants/tr-a/profiles/tr-a-grab.yaml"] = profileYAML("tr-a-grab", "fleet: demo", "  tier: 1\n  dependsOn: [tr-platform]\n  addons:\n  - name: grab\n    manifests: {path: tenants/tr-a/grab}\n")
	files["tenants/tr-a/grab/cm.yaml"] = tenantConfigMap("tr-a", "owned", "tenant")
	f.Commit("fleet", files)
	h := newHarness(t, f, nil)
	res, _ := h.d.RunOnce(ctx)
	page := f.Show("regatta/status", "status/tenants/tr-a.md")
	if !strings.Contains(page, "# Status of tenant tr-a") || !strings.Contains(page, "tr-a-app") ||
		strings.Contains(page, "tr-b-app") || regexp.MustCompile(`\bc37\b`).MatchString(page) { // not in a commit ID
		t.Errorf("tenant tr-a's status page:\n%s", page)
	}
	for _, c := range []string{"c35", "c36"} {
		if p := pairs(res, c)["tr-a-app"]; p.State != status.StateApplied {
			t.Fatalf("%s: tr-a-app %s %+v", c, p.State, p.Error)
		}
	}
	if got := configMapObj(t, "c35", "tr-a", "owned"); got.Data["v"] != "platform" || got.Labels["regatta.dev/profile"] != "tr-platform" {
		t.Errorf("a tenant's lower tier took over the platform's object: %v %v", got.Data, got.Labels)
	}
	if g := pairs(res, "c35")["tr-a-grab"]; g.State != status.StateConflict {
		t.Errorf("tr-a-grab: %s %q %+v", g.State, g.Message, g.Error)
	}
	if _, ok := pairs(res, "c37")["tr-a-app"]; ok || configMap(t, "c37", "tr-a", "app") != nil {
		t.Fatal("team a's profile reached c37, outside its tenant")
	}
	if configMap(t, "c35", "tr-b", "app") != nil {
		t.Fatal("team b's profile reached c35, outside its tenant")
	}
	f.Commit("tenant a oversteps", map[string]string{
		"tenants/tr-a/app/cm.yaml":  tenantConfigMap("tr-a", "app", "two"),
		"tenants/tr-a/app/bad.yaml": forbiddenObjects("tr"),
		"tenants/tr-b/app/cm.yaml":  tenantConfigMap("tr-b", "app", "two"),
	})
	res, _ = h.d.RunOnce(ctx)
	p := pairs(res, "c35")["tr-a-app"]
	if p.State != status.StateFailed || p.Error == nil || p.Error.File != "tenants/tr-a/app/bad.yaml" || p.Error.Line != 1 ||
		!strings.Contains(p.Error.Message, "ClusterRole/tr-evil") || !strings.Contains(p.Error.Message, "kube-system") ||
		!strings.Contains(p.Error.Message, "ConfigMap/tr-b/tr-steal") {
		t.Fatalf("tr-a-app not refused with file and line: %s %+v", p.State, p.Error)
	}
	for _, c := range []string{"c35", "c36"} {
		if got := configMap(t, c, "tr-a", "app")["v"]; got != "one" {
			t.Errorf("%s: the refused profile's ConfigMap changed: %q", c, got)
		}
		if configMap(t, c, "kube-system", "tr-sys") != nil || configMap(t, c, "tr-b", "tr-steal") != nil {
			t.Errorf("%s: a refused object was applied", c)
		}
	}
	if _, err := clientset(t, "c35").RbacV1().ClusterRoles().Get(ctx, "tr-evil", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRole applied: %v", err)
	}
	for _, c := range []string{"c36", "c37"} {
		if b := pairs(res, c)["tr-b-app"]; b.State != status.StateApplied || configMap(t, c, "tr-b", "app")["v"] != "two" {
			t.Errorf("%s: the other tenant was affected: %s %+v", c, b.State, b.Error)
		}
	}
}

// TestTenantRefusedByClusterRBAC: with regatta's own check bypassed, the
// forbidden objects meet the cluster's RBAC for the tenant's
// ServiceAccount, which regatta impersonates: none is created, the
// tenant's objects applied before are neither deleted nor lost, and the
// other tenant goes on.
func TestTenantRefusedByClusterRBAC(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	f.Commit("fleet", tenantFleetFiles(t, "tk"))
	h := newHarness(t, f, func(o *DaemonOptions) { o.StatusBranch = "" })
	h.r.opts.skipTenantGuard = true
	res, _ := h.d.RunOnce(ctx)
	if p := pairs(res, "c35")["tk-a-app"]; p.State != status.StateApplied {
		t.Fatalf("tk-a-app under impersonation: %s %+v", p.State, p.Error)
	}
	f.Commit("tenant a oversteps", map[string]string{"tenants/tk-a/app/bad.yaml": forbiddenObjects("tk")})
	res, _ = h.d.RunOnce(ctx)
	p := pairs(res, "c35")["tk-a-app"]
	if p.State != status.StateFailed || p.Error == nil || !strings.Contains(p.Error.Message, "forbidden") {
		t.Fatalf("tk-a-app: %s %+v", p.State, p.Error)
	}
	if !strings.Contains(p.Error.Message, "system:serviceaccount:regatta-system:tenant-tk-a") {
		t.Errorf("the refusal does not name the impersonated ServiceAccount: %s", p.Error.Message)
	}
	for _, c := range []string{"c35", "c36"} {
		if configMap(t, c, "kube-system", "tk-sys") != nil || configMap(t, c, "tk-b", "tk-steal") != nil {
			t.Errorf("%s: RBAC let a forbidden ConfigMap through", c)
		}
		if _, err := clientset(t, c).RbacV1().ClusterRoles().Get(ctx, "tk-evil", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: RBAC let the ClusterRole through: %v", c, err)
		}
		if configMap(t, c, "tk-a", "app")["v"] != "one" {
			t.Errorf("%s: the tenant's ConfigMap applied before was harmed", c)
		}
	}
	for _, c := range []string{"c36", "c37"} {
		if b := pairs(res, c)["tk-b-app"]; b.State != status.StateApplied {
			t.Errorf("%s: the other tenant was affected: %s %+v", c, b.State, b.Error)
		}
	}
}
