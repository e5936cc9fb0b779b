package lua

import "testing"

func TestHealthSelectorMostSpecificWins(t *testing.T) {
	var h HealthSelector
	for _, k := range []struct{ group, kind, name string }{
		{"*", "*", "everything"},
		{"", "*", "core"},
		{"*.crossplane.io", "*", "crossplane"},
		{"pkg.crossplane.io", "*", "crossplane pkg"},
		{"*.crossplane.io", "Provider", "crossplane providers"},
		{"apps", "Deployment", "deployments"},
		{"apps", "*Set", "sets"},
		{"apps", "StatefulSet", "statefulsets"},
		{"argoproj.io", "Roll?ut", "rollouts"},
		{"[a-c]*.example.com", "*", "bracket"},
		{"", "*", "core, again"},
	} {
		if err := h.Add(k.group, k.kind, Script{Name: k.name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ group, kind, want string }{
		{"apps", "Deployment", "deployments"},
		{"apps", "StatefulSet", "statefulsets"},
		{"apps", "DaemonSet", "sets"},
		{"apps", "ReplicaSet", "sets"},
		{"apps", "ControllerRevision", "everything"},
		{"", "ConfigMap", "core"},
		{"pkg.crossplane.io", "Provider", "crossplane providers"},
		{"pkg.crossplane.io", "Function", "crossplane pkg"},
		{"aws.crossplane.io", "Bucket", "crossplane"},
		{"crossplane.io", "Bucket", "everything"},
		{"argoproj.io", "Rollout", "rollouts"},
		{"argoproj.io", "Application", "everything"},
		{"b.example.com", "Widget", "bracket"},
		{"d.example.com", "Widget", "everything"},
	} {
		got, ok := h.Script(tc.group, tc.kind)
		if !ok || got.Name != tc.want {
			t.Errorf("%s/%s: got %q, %v; want %q", tc.group, tc.kind, got.Name, ok, tc.want)
		}
	}
}

func TestHealthSelectorBuiltins(t *testing.T) {
	var h HealthSelector
	if s, ok := h.Script("argoproj.io", "Rollout"); !ok || s.Name != "builtin health Rollout.argoproj.io" || s.Source == "" {
		t.Errorf("no key: got %+v, %v; want the built-in script", s, ok)
	}
	if _, ok := h.Script("example.com", "Widget"); ok {
		t.Error("a kind without key or built-in has a script")
	}
	if err := h.Add("*", "*", Script{Name: "mine"}); err != nil {
		t.Fatal(err)
	}
	if s, _ := h.Script("argoproj.io", "Rollout"); s.Name != "mine" {
		t.Errorf("a matching key must win over the built-in, got %q", s.Name)
	}
}

func TestHealthSelectorBadPattern(t *testing.T) {
	var h HealthSelector
	if err := h.Add("apps", "[Deployment", Script{}); err == nil {
		t.Error("an unclosed [ was accepted")
	}
	if err := h.Add("[", "*", Script{}); err == nil {
		t.Error("an unclosed [ in the group was accepted")
	}
}
