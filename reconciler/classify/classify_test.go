package classify

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/regatta-dev/regatta/spec"
)

// fakeLister is a narrow stand-in for a cluster that counts its lists.
type fakeLister struct {
	objs  map[string][]map[string]any // by kind
	calls map[string]int
}

func (f *fakeLister) List(_ context.Context, group, version, kind, ns string) ([]map[string]any, error) {
	f.calls[kind]++
	if kind == "Broken" {
		return nil, errors.New("the server could not find the requested resource")
	}
	return f.objs[kind], nil
}

// countEvaluator matches aggregated scripts when len(resources) >= 5 and
// object scripts when the object has label ready=true.
type countEvaluator struct{}

func (countEvaluator) EvaluateObject(_ context.Context, _, _ string, obj map[string]any) (bool, error) {
	return labelsMatch(obj, []spec.LabelFilter{{Key: "ready", Operation: spec.LabelFilterEqual, Value: "true"}}), nil
}

func (countEvaluator) EvaluateAggregated(_ context.Context, _, _ string, rs []map[string]any) (bool, error) {
	return len(rs) >= 5, nil
}

func node(name string, labels map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": name, "labels": labels}}
}

func classifier(name string, labels map[string]string, vcs []spec.VersionConstraint, d *spec.DeployedResourceConstraint) *spec.Classifier {
	return &spec.Classifier{Metadata: spec.ObjectMeta{Name: name},
		Spec: spec.ClassifierSpec{ClassifierLabels: labels, KubernetesVersionConstraints: vcs, DeployedResourceConstraint: d}}
}

func TestClassify(t *testing.T) {
	var nodes []map[string]any
	for i := 0; i < 6; i++ {
		nodes = append(nodes, node(fmt.Sprintf("n%d", i), map[string]any{"ready": fmt.Sprint(i < 5), "role": "worker"}))
	}
	l := &fakeLister{objs: map[string][]map[string]any{"Node": nodes}, calls: map[string]int{}}
	nodeSel := spec.ResourceSelector{Version: "v1", Kind: "Node"}
	perObj := nodeSel
	perObj.Evaluate = "function evaluate() ... end"
	cs := []*spec.Classifier{
		classifier("v1-37", map[string]string{"kubernetes": "v1-37"}, []spec.VersionConstraint{
			{Comparison: spec.CompareGreaterThanOrEqualTo, Version: "1.37.0"}, {Comparison: spec.CompareLessThan, Version: "1.38.0"}}, nil),
		classifier("v1-36", map[string]string{"kubernetes": "v1-36"}, []spec.VersionConstraint{
			{Comparison: spec.CompareLessThan, Version: "1.37.0"}}, nil),
		classifier("large", map[string]string{"size": "large"}, nil, &spec.DeployedResourceConstraint{
			ResourceSelectors: []spec.ResourceSelector{perObj}, AggregatedClassification: "count"}),
		classifier("has-workers", map[string]string{"workers": "yes"}, nil, &spec.DeployedResourceConstraint{
			ResourceSelectors: []spec.ResourceSelector{{Version: "v1", Kind: "Node",
				LabelFilters: []spec.LabelFilter{{Key: "role", Operation: spec.LabelFilterEqual, Value: "worker"}}}}}),
		classifier("no-gpu", map[string]string{"gpu": "no"}, nil, &spec.DeployedResourceConstraint{
			ResourceSelectors: []spec.ResourceSelector{{Version: "v1", Kind: "Node",
				LabelFilters: []spec.LabelFilter{{Key: "gpu", Operation: spec.LabelFilterEqual, Value: "true"}}}}}),
		classifier("broken", map[string]string{"x": "y"}, nil, &spec.DeployedResourceConstraint{
			ResourceSelectors: []spec.ResourceSelector{{Version: "v1", Kind: "Broken"}}}),
	}
	r := Classify(context.Background(), "v1.37.2", l, countEvaluator{}, cs)
	var got []string
	for _, m := range r.Matched {
		got = append(got, m.Classifier)
	}
	if fmt.Sprint(got) != "[has-workers large v1-37]" {
		t.Errorf("matched %v", got)
	}
	if len(r.Errors) != 1 || r.Errors[0].Classifier != "broken" || fmt.Sprint(r.Errors[0]) != "classifier broken: list v1 Broken: the server could not find the requested resource" {
		t.Errorf("errors %v", r.Errors)
	}
	if l.calls["Node"] != 1 {
		t.Errorf("Node listed %d times, want once per pass", l.calls["Node"])
	}
}

func TestVersionMatches(t *testing.T) {
	c := func(cmp, v string) []spec.VersionConstraint {
		return []spec.VersionConstraint{{Comparison: cmp, Version: v}}
	}
	tests := []struct {
		version string
		cs      []spec.VersionConstraint
		want    bool
	}{
		{"v1.37.2", c(spec.CompareEqual, "1.37.2"), true},
		{"v1.37.2", c(spec.CompareEqual, "1.37.0"), false},
		{"v1.37.2", c(spec.CompareNotEqual, "1.37.0"), true},
		{"v1.37.2", c(spec.CompareNotEqual, "v1.37.2"), false},
		{"v1.37.2", c(spec.CompareGreaterThan, "1.37.1"), true},
		{"v1.37.2", c(spec.CompareGreaterThan, "1.37.2"), false},
		{"v1.37.2", c(spec.CompareGreaterThanOrEqualTo, "1.37.2"), true},
		{"v1.37.2", c(spec.CompareGreaterThanOrEqualTo, "1.38.0"), false},
		{"v1.37.2", c(spec.CompareLessThan, "1.38.0"), true},
		{"v1.37.2", c(spec.CompareLessThan, "1.37.2"), false},
		{"v1.37.2", c(spec.CompareLessThanOrEqualTo, "1.37.2"), true},
		{"v1.37.2", c(spec.CompareLessThanOrEqualTo, "1.37.1"), false},
		{"v1.36.3-eks-1a2b", c(spec.CompareLessThan, "1.37.0"), true},
		{"v1.35.4+k3s1", c(spec.CompareEqual, "1.35.4"), true},
	}
	for _, tt := range tests {
		got, err := VersionMatches(tt.version, tt.cs)
		if err != nil || got != tt.want {
			t.Errorf("%s %s %s = %v, %v; want %v", tt.version, tt.cs[0].Comparison, tt.cs[0].Version, got, err, tt.want)
		}
	}
	if _, err := VersionMatches("banana", c(spec.CompareEqual, "1.0.0")); err == nil {
		t.Error("bad cluster version accepted")
	}
}
