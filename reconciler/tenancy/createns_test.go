package tenancy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/spec"
)

// createNamespaceRepo is a tenant (namespaces t and t-*) whose profile
// installs a chart of its folder with createNamespace into namespace ns;
// kinds are the tenant's spec.kinds.
func createNamespaceRepo(ns, kinds string) fstest.MapFS {
	return fstest.MapFS{
		"clusters/c/cluster.yaml": {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec: {}\n")},
		"tenants/t/tenant.yaml": {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: Tenant\nmetadata: {name: t}\nspec:\n" +
			"  clusters: {names: [c]}\n  namespaces: [t, t-*]\n  kinds:\n" + kinds)},
		"tenants/t/profiles/p.yaml": {Data: []byte(fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: p}\nspec:\n"+
			"  clusterRefs: [c]\n  addons:\n  - name: app\n    helm: {path: tenants/t/chart, releaseName: app, releaseNamespace: %s, createNamespace: true}\n", ns))},
		"tenants/t/chart/Chart.yaml":        {Data: []byte("apiVersion: v2\nname: app\nversion: 0.1.0\n")},
		"tenants/t/chart/templates/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {a: b}\n")},
	}
}

// The Namespace a tenant's createNamespace renders passes the same guard
// as the tenant's own manifests: refused when spec.kinds does not list
// Namespace or the namespace is not one of the tenant's, allowed when both
// grant it. A tenant cannot create (and later delete) a namespace through
// createNamespace that it could not declare itself.
func TestTenantCreateNamespaceIsGuarded(t *testing.T) {
	const withNamespaces = "  - {kind: Namespace}\n  - {kind: ConfigMap}\n"
	const withoutNamespaces = "  - {kind: ConfigMap}\n"
	cases := []struct {
		name, ns, kinds, want string
	}{
		{"own namespace, Namespace granted", "t-app", withNamespaces, ""},
		{"other namespace", "payments", withNamespaces, "namespace payments is not one of tenant t's namespaces"},
		{"Namespace kind not granted", "t-app", withoutNamespaces, "may not deploy cluster-scoped kind Namespace (core)"},
	}
	r := render.New(render.Options{Helm: helm.New(helm.Options{CacheDir: t.TempDir()})})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := createNamespaceRepo(tc.ns, tc.kinds)
			repo, diags := spec.Load(fsys)
			if err := diags.Err(); err != nil {
				t.Fatal(err)
			}
			prof := repo.Profile("p")
			res, err := r.Render(context.Background(), render.Request{FS: fsys, Revision: "r", Profile: prof,
				Cluster: render.ClusterFacts{Name: "c"}})
			if err != nil {
				t.Fatal(err)
			}
			if s := res.Steps[0]; s.Phase != render.PhaseNamespace || s.Objects[0].GetName() != tc.ns {
				t.Fatalf("first step %s %s: not the created namespace", s.Addon, s.Phase)
			}
			vs := Check(prof, res, Options{FS: fsys})
			var reasons []string
			for _, v := range vs {
				reasons = append(reasons, v.Object+": "+v.Reason)
			}
			switch {
			case tc.want == "" && len(vs) > 0:
				t.Fatalf("refused: %v", reasons)
			case tc.want != "" && !strings.Contains(strings.Join(reasons, "\n"), "Namespace/"+tc.ns+": "):
				t.Fatalf("the created Namespace was not refused: %v", reasons)
			case tc.want != "" && !strings.Contains(strings.Join(reasons, "\n"), tc.want):
				t.Fatalf("refusals %v, want %q", reasons, tc.want)
			}
		})
	}
}
