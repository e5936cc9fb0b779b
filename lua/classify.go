package lua

import (
	"context"

	glua "github.com/yuin/gopher-lua"
)

// Match is the outcome of a classification script, Sveltos style:
//
//	function evaluate()
//	  local hs = {}
//	  hs.matching = obj.spec.replicas > 1
//	  hs.message = "replicated"
//	  return hs
//	end
type Match struct {
	Matching bool   // hs.matching; false when absent
	Message  string // hs.message; "" when absent
}

// EvaluateObject runs a per-object classification script with the global
// obj set to obj.
func (r *Runner) EvaluateObject(ctx context.Context, s Script, obj map[string]any) (Match, error) {
	return r.classify(ctx, s, map[string]any{"obj": obj})
}

// EvaluateAggregated runs an aggregated classification script with the
// global resources set to an array of all selected objects.
func (r *Runner) EvaluateAggregated(ctx context.Context, s Script, resources []map[string]any) (Match, error) {
	if resources == nil {
		resources = []map[string]any{}
	}
	return r.classify(ctx, s, map[string]any{"resources": resources})
}

func (r *Runner) classify(ctx context.Context, s Script, globals map[string]any) (Match, error) {
	var m Match
	err := r.session(ctx, s, globals, func(c *call, v glua.LValue) error {
		var err error
		m, err = c.match(v)
		return err
	})
	return m, err
}

// match reads hs.matching and hs.message.
func (c *call) match(v glua.LValue) (Match, error) {
	hs, err := c.table(v, "matching and message")
	if err != nil {
		return Match{}, err
	}
	var m Match
	switch mv := c.field(hs, "matching").(type) {
	case glua.LBool:
		m.Matching = bool(mv)
	case *glua.LNilType:
	default:
		return Match{}, c.invalid("hs.matching is a %s, want a boolean", mv.Type())
	}
	m.Message, err = c.message(hs)
	return m, err
}
