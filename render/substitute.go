package render

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/spec"
)

// SubstituteAnnotation, set to "disabled" as an annotation or label of an
// object, leaves the object out of variable substitution (Flux's opt-out).
const SubstituteAnnotation = "kustomize.toolkit.fluxcd.io/substitute"

// substitute replaces ${var} and ${var:=default} in every object of an
// add-on with postBuild set, as Flux's post-build substitution does.
func (a *addonRender) substitute(field string, pb *spec.PostBuild, objs []Object) ([]Object, error) {
	vars, err := a.substVars(field+".postBuild", pb)
	if err != nil {
		return nil, err
	}
	out := make([]Object, len(objs))
	for i, o := range objs {
		if optedOut(o.Unstructured) {
			out[i] = o
			continue
		}
		u, err := substituteObject(o.Unstructured, vars)
		if err != nil {
			return nil, &Error{File: o.Source, Err: fmt.Errorf("%s %s: substitution: %w", o.GetKind(), o.GetName(), err)}
		}
		out[i] = Object{Unstructured: u, Source: o.Source}
	}
	return out, nil
}

func optedOut(u *unstructured.Unstructured) bool {
	return u.GetAnnotations()[SubstituteAnnotation] == "disabled" || u.GetLabels()[SubstituteAnnotation] == "disabled"
}

// substVars collects the variables: the cluster's labels and top-level
// scalar values, then substituteFrom in order, then substitute (whose
// values are templates), later sources winning.
func (a *addonRender) substVars(field string, pb *spec.PostBuild) (map[string]string, error) {
	// The output depends on every label and value (the render key must
	// hold them all).
	a.tpl.record([]dataRead{{Path: []string{"Cluster", "Labels"}}, {Path: []string{"Cluster", "Values"}}})
	vars := map[string]string{}
	for k, v := range a.plan.data.Cluster.Labels {
		if spec.IsVarName(k) {
			vars[k] = v
		}
	}
	for k, v := range a.plan.data.Cluster.Values {
		switch v.(type) {
		case string, bool, int, int64, float64, uint64:
			if spec.IsVarName(k) {
				vars[k] = fmt.Sprint(v)
			}
		}
	}
	for i, ref := range pb.SubstituteFrom {
		data, err := a.readData(fmt.Sprintf("%s.substituteFrom[%d]", field, i), ref)
		if err != nil {
			return nil, err
		}
		for k, v := range data {
			vars[k] = v
		}
	}
	keys := make([]string, 0, len(pb.Substitute))
	for k := range pb.Substitute {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := a.fieldString(field+".substitute."+k, pb.Substitute[k])
		if err != nil {
			return nil, err
		}
		vars[k] = v
	}
	return vars, nil
}

// substituteObject substitutes the object's YAML text and reads it back,
// so that a variable may stand for a number or a boolean.
func substituteObject(u *unstructured.Unstructured, vars map[string]string) (*unstructured.Unstructured, error) {
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	text := expandVars(string(data), vars)
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		return nil, fmt.Errorf("the substituted object is not valid YAML: %w", err)
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// expandVars replaces ${name} by the variable's value (empty when it is
// not set) and ${name:=default} (or ${name:-default}) by the value or the
// default. $${ is a
// literal ${. $name without braces, and ${...} holding anything else,
// are left as they are.
func expandVars(s string, vars map[string]string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			b.WriteString(s[i:])
			return b.String()
		}
		expr := s[i+2 : i+end]
		if v, ok := evalVar(expr, vars); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+end+1])
		}
		s = s[i+end+1:]
	}
}

// evalVar evaluates the inside of ${...}; ok is false when it is not a
// variable reference.
func evalVar(expr string, vars map[string]string) (string, bool) {
	name, def, hasDefault := strings.Cut(expr, ":=")
	if !hasDefault {
		name, def, hasDefault = strings.Cut(expr, ":-")
	}
	if !spec.IsVarName(name) {
		return "", false
	}
	if v, ok := vars[name]; ok {
		return v, true
	}
	if hasDefault {
		return def, true
	}
	return "", true
}
