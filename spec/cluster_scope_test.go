package spec

import (
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

const scopedCluster = `apiVersion: regatta.dev/v1alpha1
kind: Cluster
metadata:
  name: c1
spec:
  namespaces:
`

// TestClusterNamespaces: spec.namespaces is read in order, and each entry
// must be a namespace name listed once, reported at its line; a misspelt
// key is an error of the strict loading.
func TestClusterNamespaces(t *testing.T) {
	cases := []struct {
		name, doc, errs string
		want            []string
	}{
		{name: "whole cluster", doc: strings.TrimSuffix(scopedCluster, "  namespaces:\n") + "  paused: false\n"},
		{name: "listed", doc: scopedCluster + "  - team-b\n  - team-a\n", want: []string{"team-b", "team-a"}},
		{name: "not a name", doc: scopedCluster + "  - team-a\n  - Team_B\n",
			errs: "clusters/c1/cluster.yaml:8: spec.namespaces[1]: \"Team_B\": a lowercase RFC 1123 label"},
		{name: "twice", doc: scopedCluster + "  - team-a\n  - team-a\n",
			errs: "clusters/c1/cluster.yaml:8: spec.namespaces[1]: \"team-a\" is listed twice"},
		{name: "misspelt", doc: strings.Replace(scopedCluster, "namespaces:", "namespace:", 1) + "  - team-a\n",
			errs: "clusters/c1/cluster.yaml:6: spec.namespace: unknown field \"namespace\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo, diags := Load(fstest.MapFS{"clusters/c1/cluster.yaml": {Data: []byte(tc.doc)}})
			if got := formatDiags(diags.Errors()); !strings.HasPrefix(got, tc.errs) || (tc.errs == "") != (got == "") {
				t.Fatalf("errors:\n%s\nwant:\n%s", got, tc.errs)
			}
			if tc.errs != "" {
				return
			}
			c := repo.Clusters[0]
			if strings.Join(c.Spec.Namespaces, ",") != strings.Join(tc.want, ",") || c.NamespaceScoped() != (len(tc.want) > 0) {
				t.Fatalf("namespaces %v, want %v", c.Spec.Namespaces, tc.want)
			}
			if len(tc.want) > 0 && c.InventoryNamespace() != tc.want[0] {
				t.Errorf("inventory namespace %q, want the first listed %q", c.InventoryNamespace(), tc.want[0])
			}
		})
	}
}

// TestClusterRefusal: a namespace-scoped entry refuses cluster-scoped
// kinds and namespaces it does not list; a whole-cluster entry refuses
// nothing.
func TestClusterRefusal(t *testing.T) {
	scoped := &Cluster{Metadata: ObjectMeta{Name: "c1"}, Spec: ClusterSpec{Namespaces: []string{"a", "b"}}}
	whole := &Cluster{Metadata: ObjectMeta{Name: "c2"}}
	cm, ns := schema.GroupKind{Kind: "ConfigMap"}, schema.GroupKind{Kind: "Namespace"}
	for _, tc := range []struct {
		c          *Cluster
		gk         schema.GroupKind
		ns         string
		namespaced bool
		want       string
	}{
		{scoped, cm, "b", true, ""},
		{scoped, cm, "c", true, "namespace c is not one of cluster c1's namespaces (spec.namespaces: a, b)"},
		{scoped, cm, "", true, "namespace (none) is not one of cluster c1's namespaces"},
		{scoped, ns, "", false, "cluster c1 is namespace-scoped (spec.namespaces): it may not receive cluster-scoped kind Namespace (core)"},
		{whole, ns, "", false, ""},
		{whole, cm, "c", true, ""},
	} {
		got := tc.c.Refusal(tc.gk, tc.ns, tc.namespaced)
		if !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%s %s in %q: %q, want %q", tc.c.Metadata.Name, tc.gk.Kind, tc.ns, got, tc.want)
		}
	}
}
