package events

import (
	"context"
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
	got, err := Select(context.Background(), lua.NewRunner(lua.Options{}), src, objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || resourceName(got[0]) != "Service/eng/web" {
		t.Errorf("selected %v, want Service/eng/web only", got)
	}
	src.Spec.AggregatedSelection = "function evaluate() return {matching = #resources >= 2} end"
	if got, err := Select(context.Background(), lua.NewRunner(lua.Options{}), src, objs); err != nil || len(got) != 0 {
		t.Errorf("aggregated selection kept %v (%v)", got, err)
	}
}
