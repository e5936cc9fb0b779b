package apply

import (
	"fmt"

	"github.com/fluxcd/pkg/ssa/utils"
	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Redaction marks that replace Secret values in diffs.
const (
	redacted        = "(redacted)"
	redactedChanged = "(redacted, changed)"
)

// unifiedDiff returns a unified diff from the live object to the merged
// (dry-run) one, as YAML, without server-managed metadata and with Secret
// values redacted.
func unifiedDiff(name string, live, merged *unstructured.Unstructured) (string, error) {
	live, merged = forDiff(live), forDiff(merged)
	if utils.IsSecret(merged) || utils.IsSecret(live) {
		redactSecrets(live, merged)
	}
	a, err := yaml.Marshal(live.Object)
	if err != nil {
		return "", fmt.Errorf("%s: diff: %w", name, err)
	}
	b, err := yaml.Marshal(merged.Object)
	if err != nil {
		return "", fmt.Errorf("%s: diff: %w", name, err)
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(a)), B: difflib.SplitLines(string(b)),
		FromFile: name + " (live)", ToFile: name + " (desired)", Context: 3,
	})
}

// forDiff drops what the server manages and only adds noise to a diff.
func forDiff(obj *unstructured.Unstructured) *unstructured.Unstructured {
	obj = obj.DeepCopy()
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	return obj
}

// redactSecrets replaces every data and stringData value of both objects, and
// the last-applied-configuration annotation, so that a diff says only
// whether a value changed.
func redactSecrets(live, merged *unstructured.Unstructured) {
	for _, field := range []string{"data", "stringData"} {
		old, _, _ := unstructured.NestedMap(live.Object, field)
		cur, _, _ := unstructured.NestedMap(merged.Object, field)
		for k, v := range cur {
			if prev, ok := old[k]; ok && fmt.Sprint(prev) == fmt.Sprint(v) {
				cur[k] = redacted
			} else {
				cur[k] = redactedChanged
			}
		}
		for k := range old {
			old[k] = redacted
		}
		setIfPresent(live, old, field)
		setIfPresent(merged, cur, field)
	}
	for _, obj := range []*unstructured.Unstructured{live, merged} {
		if ann := obj.GetAnnotations(); ann[lastApplied] != "" {
			ann[lastApplied] = redacted
			obj.SetAnnotations(ann)
		}
	}
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

func setIfPresent(obj *unstructured.Unstructured, m map[string]any, field string) {
	if m != nil {
		_ = unstructured.SetNestedMap(obj.Object, m, field)
	}
}
