//go:build corpus

package ytt

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestUpstreamExamples renders carvel-dev/ytt's examples/ (a checkout in
// $REGATTA_YTT_EXAMPLES, the folder holding examples/) with Render and
// the CLI: each invocation of an example's run.sh, or `-f <folder>` for
// an example without one, and counts the outcomes (docs/testing.md).
//
//	REGATTA_YTT_EXAMPLES=/tmp/ytt-upstream go test -tags corpus -run TestUpstreamExamples -v ./render/ytt/
func TestUpstreamExamples(t *testing.T) {
	root := os.Getenv("REGATTA_YTT_EXAMPLES")
	if root == "" {
		t.Fatal("set REGATTA_YTT_EXAMPLES to a checkout of carvel-dev/ytt")
	}
	cli := referenceCLI(t)
	counts := map[string]int{}
	for _, c := range upstreamCases(t, root) {
		got := compare(t, cli, root, c.args)
		kind, _, _ := strings.Cut(got, ":")
		counts[kind]++
		if kind == "both-fail" {
			t.Logf("%s %v: both fail", c.name, c.args)
		}
		if kind != "identical" && kind != "both-fail" && kind != "unsupported flags" {
			t.Errorf("%s %v: %s", c.name, c.args, got)
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%s: %d", k, counts[k])
	}
}

type upstreamCase struct {
	name string
	args []string
}

// upstreamCases lists the invocations: run.sh lines starting with ./ytt
// (continuations joined), else one -f per example folder holding files.
func upstreamCases(t *testing.T, root string) []upstreamCase {
	var out []upstreamCase
	dirs := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.Name() == "run.sh" {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(strings.ReplaceAll(string(b), "\\\n", " "), "\n") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "./ytt "); ok {
					out = append(out, upstreamCase{name: rel + ":" + itoa(i+1), args: shellFields(rest)})
				}
			}
			dirs[filepath.Dir(rel)] = false
			return nil
		}
		if _, seen := dirs[filepath.Dir(rel)]; !seen {
			dirs[filepath.Dir(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, plain := range dirs {
		if plain && !hasRunScriptAbove(dirs, dir) {
			out = append(out, upstreamCase{name: dir, args: []string{"-f", dir}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// hasRunScriptAbove: a folder inside an example with a run.sh, or
// inside another example folder, is not an example of its own.
func hasRunScriptAbove(dirs map[string]bool, dir string) bool {
	for d := filepath.Dir(dir); d != "." && d != "examples"; d = filepath.Dir(d) {
		if _, ok := dirs[d]; ok {
			return true
		}
	}
	return false
}

func itoa(i int) string { return strconv.Itoa(i) }

// shellFields splits a command line on spaces, honouring quotes.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	quote := rune(0)
	in := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in || cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in || cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
