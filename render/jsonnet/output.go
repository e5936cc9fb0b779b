package jsonnet

import (
	"fmt"
	"sort"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Manifest is one object of a program's output and where in the output
// it sits (a Jsonnet path such as `[2]` or `.grafana.deployment`).
type Manifest struct {
	Where  string
	Object map[string]any
}

// Manifests reads a program's output (JSON) as Kubernetes manifests:
//   - an object with apiVersion or kind is one manifest (a List is one
//     manifest too; the caller expands its items);
//   - an array holds manifests, in order (a stream, as `jsonnet -y`);
//   - any other object maps names to manifests, taken in field order
//     (the order the CLI prints, and `jsonnet -m` writes files in), as
//     kube-prometheus's examples build them;
//
// nested arrays and objects are read the same way; nulls are skipped.
// Numbers become int64 when whole, float64 otherwise, as Kubernetes
// decodes JSON.
func Manifests(out string) ([]Manifest, error) {
	var v any
	if err := utiljson.Unmarshal([]byte(out), &v); err != nil {
		return nil, fmt.Errorf("output is not JSON: %w", err)
	}
	var ms []Manifest
	if err := collect(v, "", &ms); err != nil {
		return nil, err
	}
	return ms, nil
}

func collect(v any, where string, ms *[]Manifest) error {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		for i, e := range t {
			if err := collect(e, fmt.Sprintf("%s[%d]", where, i), ms); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		_, av := t["apiVersion"]
		_, k := t["kind"]
		if av || k {
			*ms = append(*ms, Manifest{Where: whereOrTop(where), Object: t})
			return nil
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := collect(t[k], fmt.Sprintf("%s[%q]", where, k), ms); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("output%s: a %T is not a manifest (an object with apiVersion and kind)", where, v)
}

func whereOrTop(where string) string {
	if where == "" {
		return "(top level)"
	}
	return "output" + where
}
