package lua

import (
	"errors"
	"fmt"
	"testing"
)

// readyNodes is a Sveltos-style aggregated classification: a cluster is
// large when it has at least five Ready nodes.
const readyNodes = `
function evaluate()
  local hs = {}
  hs.matching = false
  local ready = 0
  for _, node in ipairs(resources) do
    local cond = getCondition(node, "Ready")
    if cond ~= nil and cond.status == "True" then
      ready = ready + 1
    end
  end
  if ready >= 5 then
    hs.matching = true
  end
  hs.message = ready .. " ready nodes"
  return hs
end
`

func nodes(ready, notReady int) []map[string]any {
	var out []map[string]any
	add := func(i int, status string) {
		out = append(out, map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": fmt.Sprintf("node-%d", i)},
			"status": map[string]any{"conditions": []any{
				map[string]any{"type": "MemoryPressure", "status": "False"},
				map[string]any{"type": "Ready", "status": status},
			}},
		})
	}
	for i := range ready {
		add(i, "True")
	}
	for i := range notReady {
		add(ready+i, "False")
	}
	return out
}

func TestAggregatedClassificationCountsReadyNodes(t *testing.T) {
	r := NewRunner(Options{})
	s := Script{Name: "classifiers/size.yaml spec.deployedResourceConstraint.aggregatedClassification", Source: readyNodes}
	for _, tc := range []struct {
		ready, notReady int
		want            Match
	}{
		{0, 0, Match{false, "0 ready nodes"}},
		{4, 3, Match{false, "4 ready nodes"}},
		{5, 0, Match{true, "5 ready nodes"}},
		{7, 2, Match{true, "7 ready nodes"}},
	} {
		got, err := r.EvaluateAggregated(t.Context(), s, nodes(tc.ready, tc.notReady))
		if err != nil || got != tc.want {
			t.Errorf("%d ready, %d not: got %+v, %v; want %+v", tc.ready, tc.notReady, got, err, tc.want)
		}
	}
	if got, err := r.EvaluateAggregated(t.Context(), s, nil); err != nil || got.Matching {
		t.Errorf("nil resources: %+v %v", got, err)
	}
}

func TestEvaluateObject(t *testing.T) {
	r := NewRunner(Options{})
	s := Script{Name: "classifiers/gpu.yaml spec.deployedResourceConstraint.resourceSelectors[0].evaluate", Source: `
function evaluate()
  hs = {}
  hs.matching = getLabel(obj, "nvidia.com/gpu.present") == "true"
  if hs.matching then hs.message = obj.metadata.name .. " has a GPU" end
  return hs
end`}
	gpu := map[string]any{"metadata": map[string]any{"name": "g1", "labels": map[string]any{"nvidia.com/gpu.present": "true"}}}
	plain := map[string]any{"metadata": map[string]any{"name": "p1"}}
	if got, err := r.EvaluateObject(t.Context(), s, gpu); err != nil || got != (Match{true, "g1 has a GPU"}) {
		t.Errorf("gpu node: %+v %v", got, err)
	}
	if got, err := r.EvaluateObject(t.Context(), s, plain); err != nil || got != (Match{}) {
		t.Errorf("plain node: %+v %v", got, err)
	}
}

func TestClassificationAcceptsTopLevelReturn(t *testing.T) {
	got, err := NewRunner(Options{}).EvaluateObject(t.Context(),
		Script{Name: "x", Source: `return {matching = obj.spec.replicas > 2, message = 7}`},
		map[string]any{"spec": map[string]any{"replicas": 3}})
	if err != nil || got != (Match{true, "7"}) {
		t.Errorf("got %+v %v", got, err)
	}
}

func TestClassificationInvalidResults(t *testing.T) {
	r := NewRunner(Options{})
	for src, want := range map[string]string{
		`x = 1`:                                  "x: the script returned nothing (and defines no function evaluate()); want a table with matching and message",
		`function evaluate() return 1 end`:       "x: the script returned a number, want a table with matching and message",
		`return {matching = "yes"}`:              "x: hs.matching is a string, want a boolean",
		`return {matching = true, message = {}}`: "x: hs.message is a table, want a string",
	} {
		_, err := r.EvaluateObject(t.Context(), Script{Name: "x", Source: src}, nil)
		if !errors.Is(err, ErrInvalidResult) || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", src, err, want)
		}
	}
}
