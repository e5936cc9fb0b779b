package render

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/kustomize/api/resource"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// objectOf converts one resource of kustomize's output into the content of
// an unstructured object.
//
// The reference is kyaml's MarshalJSON read back by apimachinery's JSON
// decoder (what `kubectl kustomize | kubectl apply` sends): it encodes the
// YAML node tree as text, decodes that text, encodes JSON and leaves the
// JSON to be decoded again. objectOf decodes the node tree once and gives
// each value the type that round trip gives it: int64 for a number whose
// JSON form is an integer, float64 otherwise. A value the round trip would
// change or refuse (text that is not UTF-8, numbers beyond int64, keys that
// are not strings, timestamps, NaN) takes the round trip itself, so both
// ways give the same object or the same error; TestObjectOfMatchesJSONRoundTrip
// holds them together.
func objectOf(res *resource.Resource) (map[string]any, error) {
	if n := res.YNode(); n != nil && n.Kind == kyaml.MappingNode {
		var obj map[string]any
		if n.Decode(&obj) == nil && asJSONValues(obj) {
			return obj, nil
		}
	}
	return objectViaJSON(res)
}

// objectViaJSON is the reference conversion.
func objectViaJSON(res *resource.Resource) (map[string]any, error) {
	js, err := res.MarshalJSON()
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	if err := utiljson.Unmarshal(js, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// asJSONValues gives every value of m, in place, the type a JSON round
// trip gives it, and reports false (m half converted) when one of them is
// something the round trip would change otherwise or refuse.
func asJSONValues(m map[string]any) bool {
	for k, v := range m {
		if !utf8.ValidString(k) {
			return false
		}
		w, ok := asJSONValue(v)
		if !ok {
			return false
		}
		m[k] = w
	}
	return true
}

func asJSONValue(v any) (any, bool) {
	switch v := v.(type) {
	case nil, bool:
		return v, true
	case string:
		return v, utf8.ValidString(v)
	case int:
		return int64(v), true
	case int64:
		return v, true
	case float64:
		return roundTripNumber(v)
	case map[string]any:
		ok := asJSONValues(v)
		return v, ok
	case []any:
		for i, e := range v {
			w, ok := asJSONValue(e)
			if !ok {
				return nil, false
			}
			v[i] = w
		}
		return v, true
	}
	return nil, false
}

// roundTripNumber is what apimachinery's decoder makes of f's JSON form: an
// int64 when that form parses as one (1.0 is "1", -0.0 is "-0"), else the
// float itself (the form is the shortest that parses back to f).
func roundTripNumber(f float64) (any, bool) {
	b, err := json.Marshal(f)
	if err != nil { // NaN and infinities
		return nil, false
	}
	if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return i, true
	}
	return f, true
}
