package apply_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

// Two cluster entries reaching API servers with the same discovery share
// one REST mapper (about 0.2 MiB each otherwise); a cluster whose
// discovery changes (a CRD installed) maps the new kind through a mapper
// of its own answer, and a cluster without the CRD never maps it through
// another cluster's.
func TestMapperSharedByDiscovery(t *testing.T) {
	cache := apply.NewClientCache(testOptions().Client)
	client := func(name, server string) *apply.Client {
		c, _, err := cache.Get(name, env.Cluster(server).Kubeconfig())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cache.Delete(name) })
		return c
	}
	a, b, other := client("a", mainCluster), client("b", mainCluster), client("other", ctlCluster)
	configMap := schema.GroupKind{Kind: "ConfigMap"}
	for _, c := range []*apply.Client{a, b} {
		if _, err := c.Mapper.RESTMapping(configMap, "v1"); err != nil {
			t.Fatalf("%s: %v", c.Cluster, err)
		}
	}
	if a.SharedMapper() == nil || a.SharedMapper() != b.SharedMapper() {
		t.Fatalf("two clients of one API server have mappers %p and %p, want one shared", a.SharedMapper(), b.SharedMapper())
	}

	objs := objects(t, "crd.yaml", "NAMESPACE", "mapper-shared", "SUFFIX", "mapper")
	crd := objs[0]
	k := kube(t, mainCluster)
	if err := k.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Delete(context.Background(), crd) })
	widget := objs[1].GroupVersionKind()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := a.Mapper.RESTMapping(widget.GroupKind(), widget.Version)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the new kind never mapped on the cluster that has it: %v", err)
	}
	if a.SharedMapper() == b.SharedMapper() {
		t.Fatalf("a cluster whose discovery changed still shares the old mapper")
	}
	if _, err := other.Mapper.RESTMapping(widget.GroupKind(), widget.Version); !meta.IsNoMatchError(err) {
		t.Fatalf("a cluster without the CRD maps its kind: %v", err)
	}
	if _, err := b.Mapper.RESTMapping(widget.GroupKind(), widget.Version); err != nil {
		t.Fatalf("the second client of the API server with the CRD: %v", err)
	}
	if a.SharedMapper() != b.SharedMapper() {
		t.Fatalf("equal discovery answers after the CRD: mappers %p and %p, want one shared", a.SharedMapper(), b.SharedMapper())
	}
}
