package tenancy

import (
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

func loadTenantProfile(t *testing.T) *spec.Profile {
	t.Helper()
	fsys := fstest.MapFS{
		"clusters/c/cluster.yaml":   {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec: {}\n")},
		"tenants/t/tenant.yaml":     {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: Tenant\nmetadata: {name: t}\nspec:\n  clusters: {names: [c]}\n  namespaces: [t, t-*]\n  kinds:\n  - {kind: Namespace}\n  - {group: apps, kind: \"*\"}\n  - {group: example.com, kind: \"*\"}\n")},
		"tenants/t/profiles/p.yaml": {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: p}\nspec:\n  clusterRefs: [c]\n  addons:\n  - name: a\n    manifests: {path: tenants/t/app}\n")},
		"tenants/t/app/x.yaml":      {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: t}\n")},
	}
	repo, diags := spec.Load(fsys)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	return repo.Profile("p")
}

func obj(apiVersion, kind, ns, name string) render.Object {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetNamespace(ns)
	u.SetName(name)
	return render.Object{Unstructured: u}
}

func TestCheck(t *testing.T) {
	p := loadTenantProfile(t)
	clusterScopedWidgets := func(gk schema.GroupKind) (bool, bool) {
		if gk.Group == "example.com" {
			return gk.Kind != "ClusterWidget", true
		}
		return gk.Kind != "Namespace", true
	}
	tests := []struct {
		name  string
		o     render.Object
		scope Scope
		want  string
	}{
		{"allowed deployment", obj("apps/v1", "Deployment", "t", "d"), nil, ""},
		{"glob namespace", obj("apps/v1", "Deployment", "t-dev", "d"), nil, ""},
		{"other namespace", obj("apps/v1", "Deployment", "tx", "d"), nil, "namespace tx is not one of tenant t's namespaces"},
		{"kind not listed", obj("v1", "ConfigMap", "t", "c"), nil, "may not deploy kind ConfigMap (core)"},
		{"own namespace", obj("v1", "Namespace", "", "t-dev"), nil, ""},
		{"foreign namespace", obj("v1", "Namespace", "", "kube-system"), nil, "namespace kube-system is not one of"},
		{"wildcard is not cluster-scoped", obj("example.com/v1", "ClusterWidget", "", "w"), clusterScopedWidgets, "cluster-scoped kinds must be listed by name"},
		{"offline, no namespace", obj("example.com/v1", "Widget", "", "w"), nil, "cluster-scoped kinds must be listed by name"},
		{"placed in the step namespace", obj("example.com/v1", "Widget", "", "w"), clusterScopedWidgets, "namespace default is not one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &render.Result{Steps: []render.Step{{Addon: "a", Namespace: "default", Objects: []render.Object{tt.o}}}}
			vs := Check(p, res, Options{Scope: tt.scope})
			switch {
			case tt.want == "" && len(vs) > 0:
				t.Errorf("refused: %v", vs[0])
			case tt.want != "" && (len(vs) != 1 || !strings.Contains(vs[0].Reason, tt.want)):
				t.Errorf("got %v, want %q", vs, tt.want)
			case tt.want != "" && vs[0].File != "tenants/t/profiles/p.yaml":
				t.Errorf("placed at %s:%d, want the profile's add-on", vs[0].File, vs[0].Line)
			}
		})
	}
}
