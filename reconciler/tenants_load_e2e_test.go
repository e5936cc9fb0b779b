package reconciler

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// TestTenantLoadErrorScoped: one commit breaks tenant tl-a's profile (an
// unknown field) and changes the platform's profile and tenant tl-b's.
// The platform's and tl-b's changes apply; tl-a's objects stay as its last
// good revision left them; status names the error's file, line, field and
// the tenant. A daemon started afresh on the broken revision withdraws
// nothing of tl-a either, and fixing the folder lets tl-a's change in.
func TestTenantLoadErrorScoped(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	f.Commit("fleet", tenantFleetFiles(t, "tl"))
	h := newHarness(t, f, nil)
	res, _ := h.d.RunOnce(ctx)
	for _, c := range []string{"c35", "c36"} {
		if p := pairs(res, c)["tl-a-app"]; p.State != status.StateApplied {
			t.Fatalf("%s: tl-a-app %s %+v", c, p.State, p.Error)
		}
	}
	good := pairs(res, "c35")["tl-a-app"]
	broken := profileYAML("tl-a-app", "fleet: demo", "  dependsOn: [tl-platform]\n  colour: blue\n  addons:\n  - name: app\n    manifests: {path: tenants/tl-a/app}\n")
	f.Commit("tenant a breaks its profile; the platform and tenant b change", map[string]string{
		"tenants/tl-a/profiles/tl-a-app.yaml": broken,
		"tenants/tl-a/app/cm.yaml":            tenantConfigMap("tl-a", "app", "two"),
		"platform/extra.yaml":                 tenantConfigMap("default", "tl-platform-extra", "new"),
		"tenants/tl-b/app/cm.yaml":            tenantConfigMap("tl-b", "app", "two"),
	})
	res, _ = h.d.RunOnce(ctx)
	if len(res.Snapshot.Fleet.Errors) > 0 || res.Snapshot.Fleet.AppliedRevision != res.Snapshot.Fleet.SourceRevision {
		t.Fatalf("the revision was kept out: %+v", res.Snapshot.Fleet)
	}
	checkTenantKept(t, "c35", "c36")
	for _, c := range []string{"c35", "c36", "c37"} {
		if configMap(t, c, "default", "tl-platform-extra")["v"] != "new" {
			t.Errorf("%s: the platform's change waits for tenant tl-a", c)
		}
	}
	for _, c := range []string{"c36", "c37"} {
		if b := pairs(res, c)["tl-b-app"]; b.State != status.StateApplied || configMap(t, c, "tl-b", "app")["v"] != "two" {
			t.Errorf("%s: tenant tl-b's change waits for tenant tl-a: %s %+v", c, b.State, b.Error)
		}
	}
	p := pairs(res, "c35")["tl-a-app"]
	if p.State != status.StateFailed || p.Tenant != "tl-a" || p.Error == nil || p.Error.File != "tenants/tl-a/profiles/tl-a-app.yaml" ||
		p.Error.Line != 7 || !strings.Contains(p.Error.Message, "tenant tl-a") || !strings.Contains(p.Error.Message, `spec.colour: unknown field "colour"`) {
		t.Errorf("tl-a-app on c35: %s %q %+v", p.State, p.Tenant, p.Error)
	}
	// the record says what the cluster still holds, not "objects: 0"
	holds := fmt.Sprintf("the cluster keeps %d object", good.Objects)
	if good.Objects == 0 || p.Objects != good.Objects || p.Health != good.Health || p.Error == nil ||
		!strings.Contains(p.Error.Message, holds) || !strings.Contains(p.Error.Message, "from revision "+status.ShortRevision(good.Revision)+", untouched") {
		t.Errorf("tl-a-app on c35 does not say what the cluster holds (%d objects, %s, revision %s): objects %d, health %q, %+v",
			good.Objects, good.Health, good.Revision, p.Objects, p.Health, p.Error)
	}
	rt := res.Snapshot.Fleet.RefusedTenants
	if len(rt) != 1 || rt[0].Tenant != "tl-a" || rt[0].Errors[0].Line != 7 {
		t.Errorf("fleet record: refused tenants %+v", rt)
	}
	for _, file := range []string{status.Dashboard, status.TenantFile("tl-a")} {
		if page := f.Show("regatta/status", file); !strings.Contains(page, "Tenant tl-a is refused") ||
			!strings.Contains(page, "`tenants/tl-a/profiles/tl-a-app.yaml:7`: spec.colour: unknown field") {
			t.Errorf("%s does not name the refusal:\n%s", file, page)
		}
	}
	if page := f.Show("regatta/status", status.TenantFile("tl-b")); strings.Contains(page, "tl-a") {
		t.Errorf("tenant tl-b's page shows tl-a's refusal:\n%s", page)
	}

	// a daemon started on the broken revision knows no good tl-a: it
	// still withdraws nothing of it
	fresh := newHarness(t, f, func(o *DaemonOptions) { o.StatusBranch = "" })
	res, _ = fresh.d.RunOnce(ctx)
	checkTenantKept(t, "c35", "c36")
	if _, ok := pairs(res, "c35")["tl-a-app"]; ok {
		t.Errorf("a fresh daemon reports tl-a-app it never loaded: %+v", pairs(res, "c35")["tl-a-app"])
	}

	f.Commit("tenant a fixes its profile", map[string]string{
		"tenants/tl-a/profiles/tl-a-app.yaml": strings.Replace(broken, "  colour: blue\n", "", 1),
	})
	res, _ = h.d.RunOnce(ctx)
	for _, c := range []string{"c35", "c36"} {
		if p := pairs(res, c)["tl-a-app"]; p.State != status.StateApplied || configMap(t, c, "tl-a", "app")["v"] != "two" {
			t.Errorf("%s: tl-a-app after the fix: %s %+v", c, p.State, p.Error)
		}
	}
	if len(res.Snapshot.Fleet.RefusedTenants) != 0 {
		t.Errorf("still refused after the fix: %+v", res.Snapshot.Fleet.RefusedTenants)
	}
}

// checkTenantKept: tenant tl-a's ConfigMap is as its last good revision
// applied it.
func checkTenantKept(t *testing.T, clusters ...string) {
	t.Helper()
	for _, c := range clusters {
		if got := configMap(t, c, "tl-a", "app"); got == nil || got["v"] != "one" {
			t.Errorf("%s: tenant tl-a's last good ConfigMap changed or went: %v", c, got)
		}
	}
}
