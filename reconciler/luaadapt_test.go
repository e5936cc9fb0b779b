package reconciler

import (
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/spec"
)

func obj(apiVersion, kind string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "x"}}}
}

// A profile's glob health check keys are used, the most specific first,
// and win over the built-in scripts; a scriptFile is read from the tree.
func TestHealthCheckerGlobKeys(t *testing.T) {
	p := &spec.Profile{Source: spec.Source{File: "profiles/p.yaml"}}
	p.Spec.HealthChecks = []spec.HealthCheck{
		{Group: "*", Kind: "*", Script: `return {status = "Healthy", message = "any group"}`},
		{Kind: "*", Script: `return {status = "Progressing", message = "anything"}`},
		{Group: "*.crossplane.io", Kind: "*", ScriptFile: "health/crossplane.lua"},
	}
	tree := fstest.MapFS{"health/crossplane.lua": {Data: []byte(`return {status = "Degraded", message = "crossplane"}`)}}
	h, err := newHealthChecker(lua.NewRunner(lua.Options{}), tree, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ apiVersion, kind, want string }{
		{"argoproj.io/v1alpha1", "Rollout", "any group"},
		{"v1", "ConfigMap", "anything"},
		{"aws.crossplane.io/v1", "Bucket", "crossplane"},
	} {
		_, msg, ok, err := h.Check(t.Context(), obj(tc.apiVersion, tc.kind))
		if err != nil || !ok || msg != tc.want {
			t.Errorf("%s %s: %q %v %v, want %q", tc.apiVersion, tc.kind, msg, ok, err, tc.want)
		}
	}
}

func TestHealthCheckerBadGlob(t *testing.T) {
	p := &spec.Profile{Source: spec.Source{File: "profiles/p.yaml"}}
	p.Spec.HealthChecks = []spec.HealthCheck{{Group: "[apps", Kind: "*", Script: "return {}"}}
	_, err := newHealthChecker(lua.NewRunner(lua.Options{}), fstest.MapFS{}, p)
	if err == nil || !strings.Contains(err.Error(), "profiles/p.yaml: spec.healthChecks[0]") {
		t.Errorf("got %v", err)
	}
}
