package flux

import "testing"

// Paths of an ArtifactGenerator's artifact map back to the repository
// through its copy rules; the longest destination prefix wins.
func TestMapCopyRules(t *testing.T) {
	rules := []any{
		map[string]any{"from": "@repo/apps/base/**", "to": "@artifact/base/"},
		map[string]any{"from": "@repo/apps/staging/**", "to": "@artifact/staging/"},
		map[string]any{"from": "@repo/infrastructure/**", "to": "@artifact/"},
		map[string]any{"from": "@repo/file.yaml", "to": "@artifact/file.yaml"},
	}
	for in, want := range map[string]string{
		"staging":         "apps/staging",
		"base/podinfo":    "apps/base/podinfo",
		"controllers":     "infrastructure/controllers",
		"":                "infrastructure",
		"stagingextra/x":  "infrastructure/stagingextra/x",
		"staging/overlay": "apps/staging/overlay",
	} {
		got, ok := mapCopyRules(rules, in)
		if !ok || got != want {
			t.Errorf("mapCopyRules(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if got, ok := mapCopyRules(rules[:2], "other"); ok {
		t.Errorf("a path no rule covers mapped to %q", got)
	}
}

func TestProfileName(t *testing.T) {
	for in, want := range map[string]string{
		"apps":              "apps",
		"Infra_Controllers": "infra-controllers",
		"--x--":             "x",
		"":                  "imported",
		"a.b":               "a-b",
	} {
		if got := profileName(in); got != want {
			t.Errorf("profileName(%q) = %q, want %q", in, got, want)
		}
	}
	long := profileName("a-very-long-kustomization-name-that-goes-on-and-on-beyond-sixty-three-characters")
	if len(long) > 63 {
		t.Errorf("profileName gave %d characters", len(long))
	}
}

func TestGeneralizePath(t *testing.T) {
	for in, want := range map[string]string{
		"clusters/prod/vars.yaml":       "clusters/{{ .Cluster.Name }}/vars.yaml",
		"clusters/prod/sub/vars.yaml":   "clusters/{{ .Cluster.Name }}/sub/vars.yaml",
		"clusters/production/vars.yaml": "clusters/production/vars.yaml",
		"common/vars.yaml":              "common/vars.yaml",
	} {
		if got := generalizePath(in, "prod"); got != want {
			t.Errorf("generalizePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPathEnv(t *testing.T) {
	cu := func(paths ...string) *clusterUnits {
		c := &clusterUnits{units: map[string]*unit{}}
		for i, p := range paths {
			k := string(rune('a' + i))
			c.units[k], c.order = &unit{path: p}, append(c.order, k)
		}
		return c
	}
	for _, tc := range []struct {
		c    *clusterUnits
		want string
	}{
		{cu("apps/production", "infrastructure/production/eu"), "production"},
		{cu("apps/production", "apps/staging"), ""},
		{cu("apps/eu-1", "infrastructure"), ""},
	} {
		if got := pathEnv(tc.c); got != tc.want {
			t.Errorf("pathEnv = %q, want %q", got, tc.want)
		}
	}
}
