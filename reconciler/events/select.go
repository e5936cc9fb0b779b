package events

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/spec"
)

// Select returns, offline, the objects of objs that src makes an event:
// the selectors' group, version, kind, namespace and label filters as the
// API server would apply them, the tenant's grant as Matching applies it
// (an object without a namespace counts as cluster-scoped), then
// evaluate() and the aggregated selection as on a live cluster
// (`regatta render --event-resource`).
func Select(ctx context.Context, r *lua.Runner, src *spec.EventSource, objs []map[string]any, tenant *spec.Tenant) ([]map[string]any, error) {
	m := &Manager{opts: Options{Lua: r}}
	var all []map[string]any
	for i, rs := range src.Spec.ResourceSelectors {
		var items []map[string]any
		for _, o := range objs {
			if selects(rs, o) && mayRead(tenant, rs, o) {
				items = append(items, o)
			}
		}
		name := fmt.Sprintf("%s spec.resourceSelectors[%d].evaluate", src.Source.File, i)
		selected, err := m.evaluate(ctx, name, rs, items)
		if err != nil {
			return nil, err
		}
		all = append(all, selected...)
	}
	sortObjects(all)
	return m.aggregate(ctx, src, all)
}

// selects applies a selector's kind, namespace and label filters.
func selects(rs spec.ResourceSelector, o map[string]any) bool {
	api := stringAt(o, "apiVersion")
	group, version := "", api
	if i := strings.IndexByte(api, '/'); i >= 0 {
		group, version = api[:i], api[i+1:]
	}
	if group != rs.Group || version != rs.Version || stringAt(o, "kind") != rs.Kind {
		return false
	}
	if rs.Namespace != "" && stringAt(o, "metadata", "namespace") != rs.Namespace {
		return false
	}
	for _, lf := range rs.LabelFilters {
		v, ok := labelOf(o, lf.Key)
		equal := ok && v == lf.Value
		if equal != (lf.Operation == spec.LabelFilterEqual) {
			return false
		}
	}
	return true
}

// mayRead applies a tenant's grant to an object read from a file.
func mayRead(tenant *spec.Tenant, rs spec.ResourceSelector, o map[string]any) bool {
	if tenant == nil {
		return true
	}
	ns := stringAt(o, "metadata", "namespace")
	gk := schema.GroupKind{Group: rs.Group, Kind: rs.Kind}
	return tenant.MayRead(gk, ns, stringAt(o, "metadata", "name"), ns != "")
}

func labelOf(o map[string]any, key string) (string, bool) {
	md, _ := o["metadata"].(map[string]any)
	lbls, _ := md["labels"].(map[string]any)
	v, ok := lbls[key].(string)
	return v, ok
}
