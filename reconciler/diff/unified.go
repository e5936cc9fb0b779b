package diff

import (
	"fmt"

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
		A: difflib.SplitLines(string(a)), B: difflib.SplitLines(string(b)),
		FromFile: "base/" + name, ToFile: "head/" + name, Context: 3,
	})
	if err != nil {
		return fmt.Sprintf("(no diff: %v)", err)
	}
	return out
}
