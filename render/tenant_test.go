package render

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/spec"
)

const tenantDecl = `apiVersion: regatta.dev/v1alpha1
kind: Tenant
metadata: {name: t}
spec:
  clusters: {names: [prod-eu-1]}
  namespaces: [t]
  kinds: [{kind: ConfigMap}]
`

func tenantProfile(addon string) string {
	return "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: tp}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: a\n" + addon
}

// tenantTree writes files under a temporary folder; "->x" makes a symlink.
func tenantTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["tenants/t/tenant.yaml"] = tenantDecl
	files["clusters/prod-eu-1/cluster.yaml"] = "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: prod-eu-1}\nspec: {}\n"
	files["platform/secret.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: platform-secret, namespace: t}\ndata: {k: v}\n"
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(body, "->"); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(body), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestTenantReadsStayInItsFolder renders tenant add-ons whose Helm chart,
// dependencies or manifests lead out of the tenant's folder; the spec
// cannot see inside a chart, so the render must refuse them (or, as Helm
// charts do with symlinks, not read them).
func TestTenantReadsStayInItsFolder(t *testing.T) {
	chart := "apiVersion: v2\nname: c\nversion: 0.1.0\n"
	tests := map[string]map[string]string{
		"chart templates symlinked out": {
			"tenants/t/chart/Chart.yaml": chart,
			"tenants/t/chart/templates":  "->../../../platform",
			"tenants/t/profiles/tp.yaml": tenantProfile("    helm: {path: tenants/t/chart, releaseNamespace: t}\n"),
		},
		"chart file:// dependency out": {
			"tenants/t/chart/Chart.yaml": chart + "dependencies:\n- name: dep\n  version: 0.1.0\n  repository: file://../../../platform/dep\n",
			"platform/dep/Chart.yaml":    "apiVersion: v2\nname: dep\nversion: 0.1.0\n",
			"tenants/t/profiles/tp.yaml": tenantProfile("    helm: {path: tenants/t/chart, releaseNamespace: t}\n"),
		},
		"manifest symlinked out": {
			"tenants/t/app/cm.yaml":      "->../../../platform/secret.yaml",
			"tenants/t/profiles/tp.yaml": tenantProfile("    manifests: {path: tenants/t/app}\n"),
		},
	}
	for name, files := range tests {
		t.Run(name, func(t *testing.T) {
			root, err := os.OpenRoot(tenantTree(t, files))
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			repo, _ := spec.Load(root.FS())
			p := repo.Profile("tp")
			if p == nil || p.Tenant() == nil {
				t.Fatal("tenant profile not loaded")
			}
			r := New(Options{Helm: helm.New(helm.Options{CacheDir: t.TempDir()})})
			res, err := r.Render(context.Background(), Request{FS: root.FS(), Profile: p, Cluster: prodCluster()})
			if err == nil { // a chart skips symlinks: nothing outside may show
				for _, o := range res.Objects() {
					if o.GetName() == "platform-secret" {
						t.Fatalf("rendered the platform's object from %s", o.Source)
					}
				}
				return
			}
			if !errors.Is(err, spec.ErrPathEscapes) && !strings.Contains(err.Error(), "outside") {
				t.Errorf("not an escape: %v", err)
			}
			if strings.Contains(err.Error(), "platform-secret") {
				t.Errorf("the error shows the platform's content: %v", err)
			}
		})
	}
}

// TestTenantDecryptsOnlyWithItsRecipients: a tenant's SOPS file decrypts
// only when its declaration lists the recipient of a key the daemon holds;
// the platform's keys alone are not enough.
func TestTenantDecryptsOnlyWithItsRecipients(t *testing.T) {
	keys := testKeyring(t, "age.key")
	secret := string(sopsFixture(t, "secret.enc.yaml"))
	for name, tc := range map[string]struct {
		recipients []string
		ok         bool
	}{
		"no recipients":    {nil, false},
		"other recipient":  {testKeyring(t, "other.key").Recipients(), false},
		"listed recipient": {keys.Recipients(), true},
	} {
		t.Run(name, func(t *testing.T) {
			decl := tenantDecl
			if len(tc.recipients) > 0 {
				decl += "  decryption: {ageRecipients: [" + strings.Join(tc.recipients, ", ") + "]}\n"
			}
			dir := tenantTree(t, map[string]string{
				"tenants/t/app/secret.yaml":  secret,
				"tenants/t/profiles/tp.yaml": tenantProfile("    manifests: {path: tenants/t/app}\n"),
			})
			if err := os.WriteFile(filepath.Join(dir, "tenants/t/tenant.yaml"), []byte(decl), 0o644); err != nil {
				t.Fatal(err)
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			repo, diags := spec.Load(root.FS())
			if err := diags.Err(); err != nil {
				t.Fatal(err)
			}
			r := New(Options{Keys: keys})
			_, err = r.Render(context.Background(), Request{FS: root.FS(), Profile: repo.Profile("tp"), Cluster: prodCluster()})
			if tc.ok != (err == nil) {
				t.Fatalf("decrypted %v, want %v: %v", err == nil, tc.ok, err)
			}
		})
	}
}
