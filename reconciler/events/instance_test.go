package events

import (
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/spec"
)

func svc(ns, name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"namespace": ns, "name": name}}
}

func TestInstanceNamesAreStableAndDistinct(t *testing.T) {
	long := strings.Repeat("a.b", 30)
	ms := []Matches{
		{Cluster: "c1", Objects: []map[string]any{svc("eng", "web"), svc("ops", "web"), svc("eng", long)}},
		{Cluster: "c2", Objects: []map[string]any{svc("eng", "web")}},
		{Cluster: "c3"},
	}
	got := Instances(true, ms)
	if len(got) != 4 {
		t.Fatalf("%d instances, want 4", len(got))
	}
	seen := map[string]bool{}
	for _, in := range got {
		if seen[in.Name] {
			t.Errorf("name %s twice", in.Name)
		}
		seen[in.Name] = true
		if len(in.Name) > maxStem+9 || strings.ContainsAny(in.Name, ".A_") {
			t.Errorf("name %q is not a short DNS label", in.Name)
		}
	}
	if again := Instances(true, ms); again[0].Name != got[0].Name || got[0].Resource != "Service/eng/web" {
		t.Errorf("names not stable: %s %s (%s)", again[0].Name, got[0].Name, got[0].Resource)
	}
	all := Instances(false, ms)
	if len(all) != 2 || len(all[0].Resources) != 3 || all[0].Resource != "3 resources" {
		t.Errorf("instances for all: %+v", all)
	}
}

func TestLabelSelector(t *testing.T) {
	got, err := labelSelector([]spec.LabelFilter{
		{Key: "export", Operation: spec.LabelFilterEqual, Value: "true"},
		{Key: "tier", Operation: spec.LabelFilterDifferent, Value: "db"},
	})
	if err != nil || got != "export=true,tier!=db" {
		t.Errorf("got %q, %v", got, err)
	}
}
