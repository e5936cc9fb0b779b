package lua

import "testing"

func TestHealthSelectorMostSpecificWins(t *testing.T) {
	var h HealthSelector
	for _, k := range []struct{ group, kind, name string }{
		{"*", "*", "all groups"},
		{"", "*", "everything"},
		{"*.crossplane.io", "*", "crossplane"},
		{"pkg.crossplane.io", "*", "crossplane pkg"},
		{"*.crossplane.io", "Provider", "crossplane providers"},
		{"apps", "Deployment", "deployments"},
		{"apps", "*Set", "sets"},
		{"apps", "StatefulSet", "statefulsets"},
		{"argoproj.io", "Roll?ut", "rollouts"},
		{"[a-c]*.example.com", "*", "bracket"},
		{"", "Config*", "config"},
		{"", "*", "everything, again"},
	} {
		if err := h.Add(k.group, k.kind, Script{Name: k.name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ group, kind, want string }{
		{"apps", "Deployment", "deployments"},
		{"apps", "StatefulSet", "statefulsets"},
		{"apps", "DaemonSet", "sets"},
		{"apps", "ControllerRevision", "all groups"}, // ties with "everything": the first listed
		{"", "ConfigMap", "config"},
		{"", "Secret", "everything"}, // group "*" does not match the core group
		{"pkg.crossplane.io", "Provider", "crossplane providers"},
		{"pkg.crossplane.io", "Function", "crossplane pkg"},
		{"aws.crossplane.io", "Bucket", "crossplane"},
		{"crossplane.io", "Bucket", "all groups"},
		{"argoproj.io", "Rollout", "rollouts"},
		{"argoproj.io", "Application", "all groups"},
		{"b.example.com", "Widget", "bracket"},
		{"d.example.com", "Widget", "all groups"},
	} {
		got, ok := h.Script(tc.group, tc.kind)
		if !ok || got.Name != tc.want {
			t.Errorf("%s/%s: got %q, %v; want %q", tc.group, tc.kind, got.Name, ok, tc.want)
		}
	}
}

// TestHealthSelectorArgoKeys: keys match as Argo CD's resource override
// keys do, "group/Kind" (or "Kind" for the core group) as one string.
func TestHealthSelectorArgoKeys(t *testing.T) {
	for _, tc := range []struct {
		group, kind     string // the key
		objGroup, objKd string
		match           bool
	}{
		{"", "*", "", "ConfigMap", true},
		{"", "*", "apps", "Deployment", true}, // Argo CD's "*" matches every kind
		{"*", "*", "", "ConfigMap", false},    // "*/*" needs a group
		{"*", "*", "apps", "Deployment", true},
		{"", "*Set", "apps", "StatefulSet", true}, // as Argo CD's "*Set"
		{"", "Config*", "apps", "ConfigX", false},
		{"", "ConfigMap", "example.com", "ConfigMap", false},
		{"apps", "Deployment", "", "Deployment", false},
	} {
		var h HealthSelector
		if err := h.Add(tc.group, tc.kind, Script{Name: "k"}); err != nil {
			t.Fatal(err)
		}
		s, _ := h.Script(tc.objGroup, tc.objKd)
		if (s.Name == "k") != tc.match {
			t.Errorf("key %q/%q on %s/%s: matched %v, want %v", tc.group, tc.kind, tc.objGroup, tc.objKd, s.Name == "k", tc.match)
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
