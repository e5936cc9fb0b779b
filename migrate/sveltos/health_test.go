package sveltos

import (
	"context"
	"reflect"
	"testing"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// A Sveltos validateHealths script, wrapped, runs as a regatta health
// check: hs.healthy becomes Healthy, otherwise Progressing with the message.
func TestWrapHealth(t *testing.T) {
	script := `function evaluate()
  local hs = {healthy = false, message = "waiting"}
  if obj.status ~= nil and obj.status.ready then hs.healthy = true; hs.message = "" end
  return hs
end`
	r := lua.NewRunner(lua.Options{})
	s := lua.Script{Name: "wrapped", Source: wrapHealth(script)}
	for _, c := range []struct {
		obj     map[string]any
		status  lua.HealthCode
		message string
	}{
		{map[string]any{"status": map[string]any{"ready": true}}, "Healthy", ""},
		{map[string]any{"status": map[string]any{"ready": false}}, "Progressing", "waiting"},
		{map[string]any{}, "Progressing", "waiting"},
	} {
		hs, err := r.Health(context.Background(), s, c.obj)
		if err != nil {
			t.Fatal(err)
		}
		if hs.Status != c.status || hs.Message != c.message {
			t.Errorf("obj %v: got %s %q, want %s %q", c.obj, hs.Status, hs.Message, c.status, c.message)
		}
	}
}

// The v1alpha1 string form of clusterSelector becomes expressions.
func TestClusterSelectorString(t *testing.T) {
	im := &importer{report: &migrate.Report{}}
	sel := im.clusterSelector(&migrate.Doc{File: "p.yaml"}, "env=prod,region in (eu,us),!legacy")
	want := spec.LabelSelector{MatchExpressions: []spec.LabelSelectorRequirement{
		{Key: "env", Operator: "In", Values: []string{"prod"}},
		{Key: "legacy", Operator: "DoesNotExist"},
		{Key: "region", Operator: "In", Values: []string{"eu", "us"}},
	}}
	if !reflect.DeepEqual(sel, want) {
		t.Errorf("got %+v, want %+v", sel, want)
	}
	im.clusterSelector(&migrate.Doc{File: "p.yaml"}, "env in (")
	if len(im.report.Findings()) != 1 {
		t.Errorf("an invalid selector was not reported: %v", im.report.Findings())
	}
}
