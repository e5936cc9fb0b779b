package helm

// MergeValues deep-merges value layers; later layers win. Maps are merged
// recursively; any other value (lists included) replaces the earlier one.
// A nil value is kept as nil, which Helm then reads as "delete this key
// from the chart's defaults" (as with `--set key=null`). The result shares
// nothing with the inputs. Chart defaults are not a layer here: Helm
// applies them under the result.
//
// Numbers come out as float64, whatever their Go type in the layers: Helm
// reads values files (`helm template -f`) and Flux reads HelmRelease values
// through JSON, so a chart sees 1000000 as the float 1e+06, and
// `{{ .Values.replicas }}` prints "1e+06" with helm as with regatta. Charts
// that need an integer use `int` or `printf "%d"`, as they must with helm.
func MergeValues(layers ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, layer := range layers {
		mergeInto(out, layer)
	}
	return out
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeInto(dm, sm)
				continue
			}
		}
		dst[k] = deepCopy(v)
	}
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = deepCopy(x)
		}
		return s
	default:
		return jsonNumber(v)
	}
}

// jsonNumber turns any Go number into the float64 that encoding/json
// would decode it to; other values stay as they are.
func jsonNumber(v any) any {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int8:
		return float64(n)
	case int16:
		return float64(n)
	case int32:
		return float64(n)
	case int64:
		return float64(n)
	case uint:
		return float64(n)
	case uint8:
		return float64(n)
	case uint16:
		return float64(n)
	case uint32:
		return float64(n)
	case uint64:
		return float64(n)
	case float32:
		return float64(n)
	}
	return v
}
