package reconciler

import (
	"context"
	"fmt"
	"io/fs"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// luaEvaluator runs classifier scripts for package classify.
type luaEvaluator struct{ r *lua.Runner }

func (e luaEvaluator) EvaluateObject(ctx context.Context, name, script string, obj map[string]any) (bool, error) {
	m, err := e.r.EvaluateObject(ctx, lua.Script{Name: name, Source: script}, obj)
	return m.Matching, err
}

func (e luaEvaluator) EvaluateAggregated(ctx context.Context, name, script string, rs []map[string]any) (bool, error) {
	m, err := e.r.EvaluateAggregated(ctx, lua.Script{Name: name, Source: script}, rs)
	return m.Matching, err
}

// healthChecker overrides kstatus for the kinds a profile's healthChecks
// name (exactly or by glob), and for the kinds regatta ships a built-in
// script for.
type healthChecker struct {
	r       *lua.Runner
	scripts lua.HealthSelector
}

// newHealthChecker reads a profile's health scripts (inline or from files).
func newHealthChecker(r *lua.Runner, tree fs.FS, p *spec.Profile) (*healthChecker, error) {
	h := &healthChecker{r: r}
	for i, hc := range p.Spec.HealthChecks {
		s := lua.Script{Name: fmt.Sprintf("%s spec.healthChecks[%d].script", p.Source.File, i), Source: hc.Script}
		if hc.ScriptFile != "" {
			b, err := fs.ReadFile(tree, hc.ScriptFile)
			if err != nil {
				return nil, fmt.Errorf("%s: spec.healthChecks[%d].scriptFile: %w", p.Source.File, i, err)
			}
			s = lua.Script{Name: hc.ScriptFile, Source: string(b)}
		}
		if err := h.scripts.Add(hc.Group, hc.Kind, s); err != nil {
			return nil, fmt.Errorf("%s: spec.healthChecks[%d]: %w", p.Source.File, i, err)
		}
	}
	return h, nil
}

func (h *healthChecker) Check(ctx context.Context, obj *unstructured.Unstructured) (string, string, bool, error) {
	gvk := obj.GroupVersionKind()
	s, ok := h.scripts.Script(gvk.Group, gvk.Kind)
	if !ok {
		return "", "", false, nil
	}
	hs, err := h.r.Health(ctx, s, obj.Object)
	if err != nil {
		return "", "", true, err
	}
	return string(hs.Status), hs.Message, true, nil
}

// Overrides reports whether a script judges objects of the kind
// (apply.KindOverrides).
func (h *healthChecker) Overrides(group, kind string) bool {
	_, ok := h.scripts.Script(group, kind)
	return ok
}

var _ apply.KindOverrides = (*healthChecker)(nil)
