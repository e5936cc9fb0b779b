package apply

import (
	"strconv"
	"strings"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// differs is the cheap screen of a watch event: whether the live object
// lacks a field or value of the desired one, exclusions left out. It looks
// only at what regatta sets (labels, annotations and the body), so status
// updates and fields other managers add pass. A true answer is confirmed by
// ssa's dry-run comparison before anything is applied: the screen may say
// "differs" for values the server normalises (quantities, say), never the
// other way round for fields regatta sets.
func differs(want, live *unstructured.Unstructured, rules jsondiff.CompiledIgnoreRules) bool {
	want = want.DeepCopy()
	if ignoredEntirely(want, rules) {
		return false
	}
	stripIgnored(want, rules)
	if !subset(toAny(want.GetLabels()), toAny(live.GetLabels())) ||
		!subset(toAny(want.GetAnnotations()), toAny(live.GetAnnotations())) {
		return true
	}
	for k, v := range want.Object {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		if !subset(v, live.Object[k]) {
			return true
		}
	}
	return false
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// subset reports whether have holds every field and value of want; lists
// must have the same length and match item by item.
func subset(want, have any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		for k, v := range w {
			if !subset(v, h[k]) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return len(w) == 0 && have == nil
		}
		for i := range w {
			if !subset(w[i], h[i]) {
				return false
			}
		}
		return true
	case nil:
		return true
	}
	return scalarEqual(want, have)
}

// scalarEqual compares JSON scalars, numbers by value (int64 and float64
// both occur in unstructured content).
func scalarEqual(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return a == b
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	case int32:
		return float64(n), true
	}
	return 0, false
}

// ignoredEntirely reports whether a rule matching obj ignores its root.
func ignoredEntirely(obj *unstructured.Unstructured, rules jsondiff.CompiledIgnoreRules) bool {
	for sel, paths := range rules {
		if !sel.MatchUnstructured(obj) {
			continue
		}
		for _, p := range paths {
			if p == jsondiff.IgnorePathRoot {
				return true
			}
		}
	}
	return false
}

// stripIgnored removes the excluded JSON pointers that match obj from it;
// missing paths are fine.
func stripIgnored(obj *unstructured.Unstructured, rules jsondiff.CompiledIgnoreRules) {
	for sel, paths := range rules {
		if !sel.MatchUnstructured(obj) {
			continue
		}
		for _, p := range paths {
			removePointer(obj.Object, p)
		}
	}
}

// removePointer deletes the value at an RFC 6901 pointer, if present.
func removePointer(doc map[string]any, pointer string) {
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	var cur any = doc
	for i, raw := range parts {
		tok := strings.ReplaceAll(strings.ReplaceAll(raw, "~1", "/"), "~0", "~")
		last := i == len(parts)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				delete(c, tok)
				return
			}
			cur = c[tok]
		case []any:
			idx, err := strconv.Atoi(tok)
			if err != nil || idx < 0 || idx >= len(c) {
				return
			}
			if last {
				c[idx] = nil // keep indexes of other items; nil is "anything" to subset
				return
			}
			cur = c[idx]
		default:
			return
		}
	}
}
