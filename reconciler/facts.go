package reconciler

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

// factsClient reads what classification needs from a cluster: its version
// and the objects of the kinds classifiers select, through the apply
// engine's client of the cluster (its connections, rate limit and request
// timeout).
type factsClient struct {
	disco discovery.DiscoveryInterface
	dyn   dynamic.Interface
}

func newFactsClient(c *apply.Client) *factsClient {
	return &factsClient{disco: c.Discovery, dyn: c.Dynamic}
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
		ri := f.dyn.Resource(gv.WithResource(r.Name))
		var list interface {
			UnstructuredContent() map[string]any
		}
		if r.Namespaced && namespace != "" {
			list, err = ri.Namespace(namespace).List(ctx, metav1.ListOptions{})
		} else {
			list, err = ri.List(ctx, metav1.ListOptions{})
		}
		if err != nil {
			return nil, err
		}
		return items(list.UnstructuredContent()), nil
	}
	return nil, fmt.Errorf("the cluster serves no kind %s in %s", kind, gv)
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
