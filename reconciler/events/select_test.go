package events

import (
	"context"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/spec"
)

func TestSelect(t *testing.T) {
	src := &spec.EventSource{Spec: spec.EventSourceSpec{ResourceSelectors: []spec.ResourceSelector{{
		Version: "v1", Kind: "Service", Namespace: "eng",
		LabelFilters: []spec.LabelFilter{{Key: "tier", Operation: spec.LabelFilterDifferent, Value: "db"}},
		Evaluate:     "function evaluate() return {matching = obj.spec.ports[1].port == 443} end",
	}}}}
	port := func(o map[string]any, p int64) map[string]any {
		o["spec"] = map[string]any{"ports": []any{map[string]any{"port": p}}}
		return o
	}
	db := port(svc("eng", "db"), 443)
	db["metadata"].(map[string]any)["labels"] = map[string]any{"tier": "db"}
	objs := []map[string]any{port(svc("eng", "web"), 443), port(svc("eng", "plain"), 80), port(svc("ops", "web"), 443), db,
		{"apiVersion": "apps/v1", "kind": "Service", "metadata": map[string]any{"namespace": "eng", "name": "x"}}}
	got, err := Select(context.Background(), lua.NewRunner(lua.Options{}), src, objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || resourceName(got[0]) != "Service/eng/web" {
		t.Errorf("selected %v, want Service/eng/web only", got)
	}
	src.Spec.AggregatedSelection = "function evaluate() return {matching = #resources >= 2} end"
	if got, err := Select(context.Background(), lua.NewRunner(lua.Options{}), src, objs, nil); err != nil || len(got) != 0 {
		t.Errorf("aggregated selection kept %v (%v)", got, err)
	}
}

// TestSelectTenant: a tenant's profile sees only the resources of the kinds
// and namespaces its tenant may read, before evaluate() and the aggregated
// selection run (the aggregate cannot count what the tenant may not see).
func TestSelectTenant(t *testing.T) {
	secret := func(ns, name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"namespace": ns, "name": name}}
	}
	ns := func(name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
	}
	src := &spec.EventSource{Spec: spec.EventSourceSpec{ResourceSelectors: []spec.ResourceSelector{
		{Version: "v1", Kind: "Secret"},
		{Version: "v1", Kind: "Namespace"},
	}}}
	objs := []map[string]any{secret("team-a", "mine"), secret("team-a-dev", "dev"), secret("team-b", "theirs"),
		ns("team-a"), ns("team-b")}
	tenant := &spec.Tenant{Metadata: spec.ObjectMeta{Name: "team-a"}, Spec: spec.TenantSpec{
		Namespaces: []string{"team-a", "team-a-*"},
		Kinds:      []spec.TenantKind{{Kind: "Secret"}, {Kind: "Namespace"}},
	}}
	names := func(got []map[string]any) string {
		var out []string
		for _, o := range got {
			out = append(out, resourceName(o))
		}
		return strings.Join(out, " ")
	}
	r := lua.NewRunner(lua.Options{})
	got, err := Select(context.Background(), r, src, objs, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Namespace/team-a Secret/team-a-dev/dev Secret/team-a/mine"; names(got) != want {
		t.Errorf("tenant sees %q, want %q", names(got), want)
	}
	if got, _ := Select(context.Background(), r, src, objs, nil); len(got) != len(objs) {
		t.Errorf("a platform profile sees %d of %d resources", len(got), len(objs))
	}
	src.Spec.AggregatedSelection = "function evaluate() return {matching = #resources <= 3} end"
	if got, err := Select(context.Background(), r, src, objs, tenant); err != nil || len(got) != 3 {
		t.Errorf("the aggregated selection counted resources the tenant may not read: %d (%v)", len(got), err)
	}
	tenant.Spec.Kinds = []spec.TenantKind{{Kind: "ConfigMap"}}
	if got, _ := Select(context.Background(), r, src, objs, tenant); len(got) != 0 {
		t.Errorf("a tenant without the kinds sees %s", names(got))
	}
}
