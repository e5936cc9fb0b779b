package status

import (
	"reflect"
	"strings"
	"testing"
)

// hostile is what a tenant's Lua health script or objects can put into
// status texts: HTML, Markdown links and images, code-span and table
// breakers.
const hostile = "<img src=x onerror=alert(1)> [click](https://evil.example) ![i](https://evil.example/i.png) `x` | *b* _i_ &amp;"

// Every text a profile controls is escaped on the fleet dashboard and the
// tenant's page, and bounded, with a visible marker, in every status file:
// a 3 MiB health message is not committed whole.
func TestFilesEscapeAndBoundProfileTexts(t *testing.T) {
	huge := strings.Repeat("é", 3<<19) // 3 MiB, two bytes a character
	s := Snapshot{
		Fleet: Fleet{SourceRevision: "abcdef123456", Errors: []Error{{File: "tenants/t1/profiles/`x`.yaml", Message: hostile}},
			Rollouts: []RolloutStatus{{Profile: "app", Stage: "canary", Halted: true, Reason: hostile + huge}}},
		Clusters: []ClusterStatus{{Cluster: "a", Reachable: true, Error: hostile,
			ClassifierErrors: []ClassifierError{{Classifier: "gpu", Message: hostile}},
			LabelNotes:       []LabelNote{{Key: "size", Reason: "conflict", Message: hostile}},
			Profiles: []Profile{
				{Name: "app", Tenant: "t1", State: StateProgressing, Message: hostile, Health: huge},
				{Name: "web", Tenant: "t1", State: StateFailed, Error: &Error{Object: "ConfigMap/x/`a|b`", File: "tenants/t1/a.yaml", Message: hostile + huge}},
			}}},
	}
	before := cloneSnapshot(t, s)
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, before) {
		t.Error("Files changed the snapshot it was given")
	}
	for name, b := range files {
		page := string(b)
		if len(b) > 4*MaxText+4096 {
			t.Errorf("%s: %d bytes", name, len(b))
		}
		if strings.HasSuffix(name, ".md") {
			for _, raw := range []string{"<img", "](https://", "`x`", "`a|b`", "| *b*", "&amp;amp"} {
				if strings.Contains(page, raw) && raw != "&amp;amp" || raw == "&amp;amp" && !strings.Contains(page, raw) {
					t.Errorf("%s: %q unescaped (or & not escaped):\n%s", name, raw, page)
				}
			}
			if !strings.Contains(page, "&lt;img src=x onerror=alert(1)&gt;") || !strings.Contains(page, "[truncated:") {
				t.Errorf("%s: escaped text or truncation marker missing:\n%s", name, page)
			}
		}
	}
	rec := string(files[ClusterFile("a")])
	if !strings.Contains(rec, "[truncated: ") || !strings.Contains(rec, "onerror") {
		t.Errorf("cluster record: no truncation marker, or the short text lost:\n%.2000s", rec)
	}
	if !strings.Contains(string(files[FleetFile]), "[truncated: ") {
		t.Error("fleet record: rollout reason not bounded")
	}
	if got := Overlong(s.Clusters[0]); len(got) != 2 || got[0].Field != "profiles[0].health" || got[1].Field != "profiles[1].error.message" ||
		*got[0].Text != huge {
		t.Errorf("Overlong: %d fields %v", len(got), got)
	}
}

func cloneSnapshot(t *testing.T, s Snapshot) Snapshot {
	t.Helper()
	c := s
	c.Fleet.Errors = append([]Error(nil), s.Fleet.Errors...)
	c.Fleet.Rollouts = append([]RolloutStatus(nil), s.Fleet.Rollouts...)
	c.Clusters = append([]ClusterStatus(nil), s.Clusters...)
	for i := range c.Clusters {
		c.Clusters[i].Profiles = append([]Profile(nil), s.Clusters[i].Profiles...)
		for j := range c.Clusters[i].Profiles {
			if e := c.Clusters[i].Profiles[j].Error; e != nil {
				v := *e
				c.Clusters[i].Profiles[j].Error = &v
			}
		}
	}
	return c
}

func TestTruncateAtCharacter(t *testing.T) {
	got := truncate("aé"+strings.Repeat("x", 10), 2)
	if got != "a… [truncated: 12 more bytes]" {
		t.Errorf("%q", got)
	}
	if truncate("short", 10) != "short" {
		t.Error("short text changed")
	}
}

// TestPagesDropControlCharacters: ANSI escape sequences, other control
// characters and bidirectional overrides a tenant writes into a status
// text reach neither the dashboard (status/README.md, `regatta status -o
// markdown`) nor the tenant's page; the text around them stays.
func TestPagesDropControlCharacters(t *testing.T) {
	const hostile = "\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x1b\\ \x1b]0;title\x07bell\x07 back\bspace nul\x00 \u202egnp.exe\u202c c1\u009b31m end"
	s := Snapshot{
		Fleet: Fleet{SourceRevision: "abcdef123456", Errors: []Error{{File: "tenants/t1/\x1b[2Jx.yaml", Message: hostile}},
			RefusedTenants: []RefusedTenant{{Tenant: "t1", Errors: []Error{{File: "tenants/t1/tenant.yaml", Message: hostile}}}},
			Rollouts:       []RolloutStatus{{Profile: "app", Stage: "canary", Halted: true, Reason: hostile}}},
		Clusters: []ClusterStatus{{Cluster: "a", Reachable: true, Error: hostile,
			ClassifierErrors: []ClassifierError{{Classifier: "gpu\x1b[1m", Message: hostile}},
			Profiles: []Profile{
				{Name: "app", Tenant: "t1", State: StateProgressing, Message: hostile, Health: hostile},
				{Name: "web", Tenant: "t1", State: StateFailed, Error: &Error{Object: "ConfigMap/x/\x1b[1ma", File: "tenants/t1/a.yaml", Message: hostile}},
			}}},
	}
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{"regatta status -o markdown": RenderDashboard(s)}
	for name, b := range files {
		if strings.HasSuffix(name, ".md") {
			pages[name] = string(b)
		}
	}
	if len(pages) < 3 {
		t.Fatalf("want the dashboard and a tenant's page, got %v", len(pages))
	}
	for name, page := range pages {
		if i := strings.IndexFunc(page, func(r rune) bool { return unprintable(r) && r != '\n' }); i >= 0 {
			t.Errorf("%s: control character %q at %d:\n%q", name, page[i:i+1], i, page)
		}
		if want := "red link bell backspace nul gnp.exe c131m end"; !strings.Contains(page, want) {
			t.Errorf("%s: %q missing:\n%s", name, want, page)
		}
		if strings.Contains(page, "evil.example") || strings.Contains(page, "title") {
			t.Errorf("%s: an escape sequence's payload shows:\n%s", name, page)
		}
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain é 日本":               "plain é 日本",
		"\x1b[1;31mbold\x1b[m":     "bold",
		"tab\tand\nnewline":        "tab\tand\nnewline",
		"\x1b[31é":                 "é",
		"unterminated \x1b]0;x":    "unterminated ",
		"\x1bcreset":               "reset",
		"a\u200fb\u2066c\u2069":    "abc",
		"del\x7f c1\u0085":         "del c1",
		"trailing escape \x1b":     "trailing escape ",
		"st \x1b]0;t\x1b\\visible": "st visible",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
