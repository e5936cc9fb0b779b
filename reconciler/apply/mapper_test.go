package apply_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// A kind of a group whose discovery fails (an aggregated API server that
// is down) is an error, never "no such kind": pruning takes the latter as
// gone.
func TestMapperFailedGroupIsNotGone(t *testing.T) {
	k := kube(t, mainCluster)
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1.mapper-down.regatta.dev"},
		"spec": map[string]any{"group": "mapper-down.regatta.dev", "version": "v1", "groupPriorityMinimum": int64(100),
			"versionPriority": int64(10), "insecureSkipTLSVerify": true,
			"service": map[string]any{"namespace": "default", "name": "mapper-down-missing", "port": int64(443)}},
	}}
	if err := k.Create(t.Context(), svc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Delete(context.Background(), svc) })
	cache := apply.NewClientCache(testOptions().Client)
	c, _, err := cache.Get("down", env.Cluster(mainCluster).Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Delete("down") })
	_, err = c.Mapper.RESTMapping(schema.GroupKind{Group: "mapper-down.regatta.dev", Kind: "Thing"}, "v1")
	if err == nil || meta.IsNoMatchError(err) {
		t.Fatalf("kind of a group whose discovery fails: %v, want a discovery error", err)
	}
	t.Logf("error: %v", err)
}
