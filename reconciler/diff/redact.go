package diff

import (
	"reflect"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Markers that replace redacted values.
const (
	Redacted        = "(redacted)"
	RedactedChanged = "(redacted, changed)"
)

// redactMode says which fields of an object are hidden.
type redactMode int

const (
	redactNone redactMode = iota
	// redactSecret hides the values of data and stringData.
	redactSecret
	// redactAll hides every field but apiVersion, kind, metadata.name and
	// metadata.namespace (objects read from a SOPS-encrypted file).
	redactAll
)

// hides reports whether the mode hides the field at path.
func (m redactMode) hides(path string) bool {
	switch m {
	case redactSecret:
		return strings.HasPrefix(path, "data.") || strings.HasPrefix(path, "stringData.")
	case redactAll:
		switch path {
		case "apiVersion", "kind", "metadata.name", "metadata.namespace":
			return false
		}
		return true
	}
	return false
}

// isSecret reports whether an object is a core Secret.
func isSecret(u *unstructured.Unstructured) bool {
	return u.GetKind() == "Secret" && u.GroupVersionKind().Group == ""
}

// redactPair returns copies of two versions of an object with the hidden
// values replaced: Redacted in both, RedactedChanged in the new version
// where the value differs. changed lists the hidden fields whose values
// changed, appeared or disappeared.
func redactPair(old, cur map[string]any, mode redactMode) (a, b map[string]any, changed []string) {
	oldLeaves := map[string]any{}
	a = walk(old, "", func(path string, v any) any {
		if !mode.hides(path) {
			return v
		}
		oldLeaves[path] = v
		return Redacted
	}).(map[string]any)
	seen := map[string]bool{}
	b = walk(cur, "", func(path string, v any) any {
		if !mode.hides(path) {
			return v
		}
		seen[path] = true
		if prev, ok := oldLeaves[path]; ok && reflect.DeepEqual(prev, v) {
			return Redacted
		}
		changed = append(changed, path)
		return RedactedChanged
	}).(map[string]any)
	for path := range oldLeaves {
		if !seen[path] {
			changed = append(changed, path)
		}
	}
	sort.Strings(changed)
	return a, b, changed
}

// walk returns a copy of v in which fn has replaced every leaf (a value
// that is not a non-empty map or list). Paths join keys with dots and
// list indexes as [i].
func walk(v any, path string, fn func(path string, leaf any) any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 && path != "" {
			return fn(path, x)
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = walk(e, joinPath(path, k), fn)
		}
		return out
	case []any:
		if len(x) == 0 {
			return fn(path, x)
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = walk(e, path+"["+strconv.Itoa(i)+"]", fn)
		}
		return out
	}
	return fn(path, v)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
