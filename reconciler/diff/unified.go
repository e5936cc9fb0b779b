package diff

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"
)

// unifiedDiff returns a unified diff (3 lines of context) between two
// versions of an object written as YAML with sorted keys.
func unifiedDiff(name string, before, after map[string]any) string {
	a, err := yaml.Marshal(before)
	if err != nil {
		return fmt.Sprintf("(no diff: %v)", err)
	}
	b, err := yaml.Marshal(after)
	if err != nil {
		return fmt.Sprintf("(no diff: %v)", err)
	}
	out, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: splitLines(a), B: splitLines(b),
		FromFile: "base/" + name, ToFile: "head/" + name, Context: 3,
	})
	if err != nil {
		return fmt.Sprintf("(no diff: %v)", err)
	}
	return out
}

// splitLines splits YAML into lines that each end in a newline, without
// the empty last line difflib.SplitLines adds after a final newline.
func splitLines(b []byte) []string {
	return difflib.SplitLines(strings.TrimSuffix(string(b), "\n"))
}
