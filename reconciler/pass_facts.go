package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// factsClient reads what classification needs from a cluster: its version
// and the objects of the kinds classifiers select, through the apply
// engine's client of the cluster (its connections, rate limit and request
// timeout). For a namespace-scoped entry it lists only inside the entry's
// namespaces: a classifier selecting a cluster-scoped kind or another
// namespace fails (and keeps its last result) instead of meeting a 403.
type factsClient struct {
	disco   discovery.DiscoveryInterface
	dyn     dynamic.Interface
	cluster *spec.Cluster
}

func newFactsClient(c *apply.Client, cluster *spec.Cluster) *factsClient {
	return &factsClient{disco: c.Discovery, dyn: c.Dynamic, cluster: cluster}
}

// version returns the cluster's Kubernetes version (git version).
func (f *factsClient) version(ctx context.Context) (string, error) {
	body, err := f.disco.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("read /version: %w", err)
	}
	return v.GitVersion, nil
}

// List lists one kind, implementing classify.Lister.
func (f *factsClient) List(ctx context.Context, group, version, kind, namespace string) ([]map[string]any, error) {
	gv := schema.GroupVersion{Group: group, Version: version}
	res, err := f.disco.ServerResourcesForGroupVersion(gv.String())
	if err != nil {
		return nil, err
	}
	for _, r := range res.APIResources {
		if r.Kind != kind || containsSlash(r.Name) {
			continue
		}
		nss, err := f.namespaces(gv.WithKind(kind).GroupKind(), r.Namespaced, namespace)
		if err != nil {
			return nil, err
		}
		var out []map[string]any
		for _, ns := range nss {
			list, err := f.dyn.Resource(gv.WithResource(r.Name)).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			out = append(out, items(list.UnstructuredContent())...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("the cluster serves no kind %s in %s", kind, gv)
}

// namespaces are those a list of a kind reads ("" for every namespace or a
// cluster-scoped kind): the namespace asked, or for a namespace-scoped
// entry each of its namespaces; what the entry may not read is an error.
func (f *factsClient) namespaces(gk schema.GroupKind, namespaced bool, namespace string) ([]string, error) {
	if !namespaced {
		namespace = ""
	}
	if f.cluster.NamespaceScoped() && namespaced && namespace == "" {
		return f.cluster.Spec.Namespaces, nil
	}
	if reason := f.cluster.Refusal(gk, namespace, namespaced); reason != "" {
		return nil, errors.New(reason)
	}
	return []string{namespace}, nil
}

func items(list map[string]any) []map[string]any {
	raw, _ := list["items"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, it := range raw {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}
