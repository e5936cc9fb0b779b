package spec

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestTenantRefusal(t *testing.T) {
	tn := &Tenant{Metadata: ObjectMeta{Name: "t"}, Spec: TenantSpec{
		Namespaces: []string{"t", "t-*"},
		Kinds:      []TenantKind{{Kind: "Namespace"}, {Kind: "Secret"}, {Group: "apps", Kind: "*"}},
	}}
	tests := []struct {
		name       string
		gk         schema.GroupKind
		ns, obj    string
		namespaced bool
		want       string
	}{
		{"own secret", schema.GroupKind{Kind: "Secret"}, "t", "s", true, ""},
		{"glob namespace", schema.GroupKind{Group: "apps", Kind: "Deployment"}, "t-dev", "d", true, ""},
		{"other namespace", schema.GroupKind{Kind: "Secret"}, "u", "s", true, "namespace u is not one of tenant t's namespaces"},
		{"no namespace", schema.GroupKind{Kind: "Secret"}, "", "s", true, "namespace  is not one of"},
		{"kind not listed", schema.GroupKind{Kind: "ConfigMap"}, "t", "c", true, "may not deploy kind ConfigMap (core)"},
		{"own namespace object", schema.GroupKind{Kind: "Namespace"}, "", "t-dev", false, ""},
		{"foreign namespace object", schema.GroupKind{Kind: "Namespace"}, "", "kube-system", false, "namespace kube-system is not one of"},
		{"wildcard is not cluster-scoped", schema.GroupKind{Group: "apps", Kind: "Cluster"}, "", "x", false, "cluster-scoped kinds must be listed by name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tn.Refusal(tt.gk, tt.ns, tt.obj, tt.namespaced)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("Refusal = %q, want %q", got, tt.want)
			}
			if tn.MayRead(tt.gk, tt.ns, tt.obj, tt.namespaced) != (tt.want == "") {
				t.Errorf("MayRead disagrees with Refusal %q", got)
			}
		})
	}
}

// TestEventSourceClustersOfTenant: a tenant's cross-cluster event profile
// reads only clusters of its grant; one outside it refuses the whole read.
func TestEventSourceClustersOfTenant(t *testing.T) {
	const profile = `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: copy}
spec:
  eventTrigger:
    eventSourceName: src
    sourceClusterSelector:
      matchLabels: {role: src}
    destinationClusterSelector: {matchLabels: {role: dst}}
  addons:
  - {name: a, template: true, manifests: {path: tenants/t/app}}
`
	fsys := fstest.MapFS{
		"events/src.yaml":              {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: src}\nspec:\n  resourceSelectors: [{version: v1, kind: ConfigMap}]\n")},
		"tenants/t/tenant.yaml":        {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: Tenant\nmetadata: {name: t}\nspec:\n  clusters: {names: [a, b]}\n  namespaces: [t]\n  kinds: [{kind: ConfigMap}]\n")},
		"tenants/t/profiles/copy.yaml": {Data: []byte(profile)},
		"tenants/t/app/cm.yaml":        {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"x-{{ .Event.Name }}\", namespace: t}\n")},
		// a tenant's classifiers are not read: classifiers are the platform's
		"tenants/t/classifiers/c.yaml": {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: Classifier\nmetadata: {name: c}\nspec:\n  classifierLabels: {role: src}\n  kubernetesVersionConstraints: [{version: 1.0.0, comparison: GreaterThan}]\n")},
	}
	for _, c := range []struct{ name, role string }{{"a", "dst"}, {"b", "src"}, {"c", "src"}} {
		fsys["clusters/"+c.name+"/cluster.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: " + c.name + ", labels: {role: " + c.role + "}}\nspec: {}\n")}
	}
	repo, diags := Load(fsys)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	if len(repo.Classifiers) != 0 {
		t.Errorf("a tenant folder's classifier was read: %v", repo.Classifiers)
	}
	p := repo.Profile("copy")
	labels := func(c *Cluster) map[string]string { return c.Metadata.Labels }
	_, err := p.EventSourceClusters(repo.Cluster("a"), repo.Clusters, labels)
	var ue *UngrantedSourcesError
	if !errors.As(err, &ue) || strings.Join(ue.Clusters, ",") != "c" || ue.Field != "spec.eventTrigger.sourceClusterSelector" ||
		p.Source.LineOf(ue.Field) != 7 {
		t.Fatalf("reading c outside the grant: %v", err)
	}
	granted := func(c *Cluster) map[string]string {
		if c.Metadata.Name == "c" {
			return map[string]string{"role": "other"}
		}
		return c.Metadata.Labels
	}
	got, err := p.EventSourceClusters(repo.Cluster("a"), repo.Clusters, granted)
	if err != nil || len(got) != 1 || got[0].Metadata.Name != "b" {
		t.Errorf("sources %v, %v: want b", got, err)
	}
}
