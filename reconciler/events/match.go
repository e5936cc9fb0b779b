package events

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// Matching returns the resources of src that match on the cluster now,
// sorted, each a copy of the watch cache's: the objects every resource
// selector selects and its evaluate() accepts, all or none of them as the
// aggregated selection says. A tenant's profile (tenant not nil) sees
// only what its tenant may read: the others are dropped before any
// script or template sees them. It starts the watch on first use and
// waits for it to list, returning ErrNotSynced when ctx ends first.
func (m *Manager) Matching(ctx context.Context, cluster string, cl *apply.Client, src *spec.EventSource, tenant *spec.Tenant) ([]map[string]any, error) {
	return m.MatchingIn(ctx, cluster, nil, cl, src, tenant)
}

// MatchingIn is Matching on a namespace-scoped cluster entry (namespaces
// not nil): its watches list and watch each of the entry's namespaces, never
// across namespaces, and a resource selector of a cluster-scoped kind or of
// another namespace is an error.
func (m *Manager) MatchingIn(ctx context.Context, cluster string, namespaces []string, cl *apply.Client, src *spec.EventSource, tenant *spec.Tenant) ([]map[string]any, error) {
	w, err := m.ensure(cluster, namespaces, cl, src)
	if err != nil {
		return nil, err
	}
	if err := w.waitSynced(ctx); err != nil {
		return nil, err
	}
	var all []map[string]any
	for i, rs := range src.Spec.ResourceSelectors {
		name := fmt.Sprintf("%s spec.resourceSelectors[%d].evaluate", src.Source.File, i)
		readable := readableObjects(tenant, w.namespaced[i], w.list(i))
		selected, err := m.evaluate(ctx, name, rs, readable)
		if err != nil {
			return nil, err
		}
		all = append(all, selected...)
	}
	sortObjects(all)
	return m.aggregate(ctx, src, all)
}

// aggregate applies the aggregated selection: all or nothing.
func (m *Manager) aggregate(ctx context.Context, src *spec.EventSource, all []map[string]any) ([]map[string]any, error) {
	if src.Spec.AggregatedSelection == "" {
		return all, nil
	}
	script := lua.Script{Name: src.Source.File + " spec.aggregatedSelection", Source: src.Spec.AggregatedSelection}
	res, err := m.opts.Lua.EvaluateAggregated(ctx, script, all)
	if err != nil {
		return nil, err
	}
	if !res.Matching {
		return nil, nil
	}
	return all, nil
}

// readableObjects copies the objects of a watch cache that the tenant
// may read (all of them for a platform profile, tenant nil).
func readableObjects(tenant *spec.Tenant, namespaced bool, items []any) []map[string]any {
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		u, ok := it.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if tenant != nil && !tenant.MayRead(u.GroupVersionKind().GroupKind(), u.GetNamespace(), u.GetName(), namespaced) {
			continue
		}
		out = append(out, runtime.DeepCopyJSON(u.Object))
	}
	return out
}

// evaluate keeps the objects a selector's evaluate() accepts.
func (m *Manager) evaluate(ctx context.Context, name string, rs spec.ResourceSelector, objs []map[string]any) ([]map[string]any, error) {
	if rs.Evaluate == "" {
		return objs, nil
	}
	var out []map[string]any
	for _, obj := range objs {
		res, err := m.opts.Lua.EvaluateObject(ctx, lua.Script{Name: name, Source: rs.Evaluate}, obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", resourceName(obj), err)
		}
		if res.Matching {
			out = append(out, obj)
		}
	}
	return out, nil
}

func (w *watch) waitSynced(ctx context.Context) error {
	if w.synced() {
		return nil
	}
	err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		return w.synced(), nil
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotSynced, err)
	}
	return nil
}
