package bench

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// committedResults reads the results the committed REPORT.md was written
// from.
func committedResults(t *testing.T) *Results {
	t.Helper()
	data, err := os.ReadFile("results/results.json")
	if err != nil {
		t.Fatal(err)
	}
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("results/results.json: %v", err)
	}
	return &r
}

// TestReportShape: the report of the committed results opens with the
// targets table, gives each section one line of method linking to a
// heading of METHODS.md (no paragraph of prose spans lines), shows a
// "later run" of a phase beside its targets, and keeps every missed
// verdict.
func TestReportShape(t *testing.T) {
	r := committedResults(t)
	rep := Report(r)
	lines := strings.Split(rep, "\n")
	at := slicesIndex(lines, "## Targets")
	if at < 0 || at > 5 {
		t.Fatalf("the targets table is at line %d, want within the first lines:\n%s", at+1, head(lines, 12))
	}
	checkSectionsLinkMethods(t, lines)
	checkParagraphsAreLines(t, lines)
	checkAnchors(t, rep)
	missed := 0
	for _, tg := range targets(r) {
		if tg.met != nil && !*tg.met {
			missed++
		}
	}
	if got := strings.Count(sectionOf(lines, "## Targets"), "| **missed** |"); got != missed || missed == 0 {
		t.Errorf("targets table shows %d missed verdicts, the targets have %d", got, missed)
	}
	if later := r.Run("health").Later; later != "" && !strings.Contains(sectionOf(lines, "## Targets"), later) {
		t.Errorf("the targets table does not show the health phase's later run %q", later)
	}
}

func slicesIndex(lines []string, want string) int {
	for i, l := range lines {
		if l == want {
			return i
		}
	}
	return -1
}

func head(lines []string, n int) string { return strings.Join(lines[:min(n, len(lines))], "\n") }

// sectionOf is the text of the section headed h, up to the next heading.
func sectionOf(lines []string, h string) string {
	var out []string
	in := false
	for _, l := range lines {
		if strings.HasPrefix(l, "## ") {
			in = l == h
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// checkSectionsLinkMethods: the first paragraph of every section but the
// targets, profiles and errors is its line of method, linking to
// METHODS.md, or says the phase was not measured.
func checkSectionsLinkMethods(t *testing.T, lines []string) {
	t.Helper()
	for i, l := range lines {
		if !strings.HasPrefix(l, "## ") || l == "## Targets" || l == "## Profiles" || l == "## Errors of this run" {
			continue
		}
		if i+2 >= len(lines) {
			t.Errorf("%s: empty section", l)
			continue
		}
		first := lines[i+2]
		if !strings.Contains(first, "](METHODS.md#") && !strings.HasPrefix(first, "Not ") {
			t.Errorf("%s: the first paragraph is not a line of method linking to METHODS.md: %q", l, first)
		}
	}
}

// checkParagraphsAreLines: outside tables, lists, code and details, no
// paragraph runs over two lines (the method lives in METHODS.md).
func checkParagraphsAreLines(t *testing.T, lines []string) {
	t.Helper()
	prose := func(l string) bool {
		return l != "" && !strings.HasPrefix(l, "|") && !strings.HasPrefix(l, "- ") && !strings.HasPrefix(l, "#") &&
			!strings.HasPrefix(l, "<") && !strings.HasPrefix(l, "`") && !strings.HasPrefix(l, "```")
	}
	code := false
	for i := 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "```") {
			code = !code
		}
		if !code && prose(lines[i]) && prose(lines[i-1]) {
			t.Errorf("line %d continues a paragraph of prose (move the method to METHODS.md): %q", i+1, lines[i])
		}
	}
}

var methodsLink = regexp.MustCompile(`\]\(METHODS\.md#([a-z0-9-]+)\)`)

// checkAnchors: every link into METHODS.md names one of its headings.
func checkAnchors(t *testing.T, rep string) {
	t.Helper()
	data, err := os.ReadFile("METHODS.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			anchors[slug(h)] = true
		}
	}
	links := methodsLink.FindAllStringSubmatch(rep, -1)
	if len(links) == 0 {
		t.Fatal("the report links to no section of METHODS.md")
	}
	for _, m := range links {
		if !anchors[m[1]] {
			t.Errorf("the report links to METHODS.md#%s, which has no such heading", m[1])
		}
	}
}

// slug is the anchor GitHub gives a heading.
func slug(h string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(h) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
			b.WriteRune(c)
		case c == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
