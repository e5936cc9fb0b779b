package apply

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/restmapper"
)

// TestSharedMapperKeepsMappings: a mapping asked twice is the same answer
// as the priority mapper's, each call a copy of its own (a caller that
// changes its copy changes no other's); an unknown kind is still an error.
func TestSharedMapperKeepsMappings(t *testing.T) {
	groups := []*restmapper.APIGroupResources{{
		Group: metav1.APIGroup{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "apps/v1", Version: "v1"}},
			PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"}},
		VersionedResources: map[string][]metav1.APIResource{"v1": {{Name: "deployments", Kind: "Deployment", Namespaced: true}}},
	}}
	m, err := NewMapperCache().get(groups)
	if err != nil {
		t.Fatal(err)
	}
	want, err := restmapper.NewDiscoveryRESTMapper(groups).RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "v1")
	if err != nil {
		t.Fatal(err)
	}
	gk := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	first, err := m.RESTMapping(gk, "v1")
	if err != nil || !reflect.DeepEqual(first, want) {
		t.Fatalf("first: %+v, %v; want %+v", first, err, want)
	}
	first.Resource.Resource = "changed"
	second, err := m.RESTMapping(gk, "v1")
	if err != nil || !reflect.DeepEqual(second, want) || second == first {
		t.Errorf("second: %+v, %v; want a copy of %+v", second, err, want)
	}
	if _, err := m.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Nothing"}, "v1"); !meta.IsNoMatchError(err) {
		t.Errorf("unknown kind: %v", err)
	}
}
