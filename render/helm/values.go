package helm

// MergeValues deep-merges value layers; later layers win. Maps are merged
// recursively; any other value (lists included) replaces the earlier one.
// A nil value is kept as nil, which Helm then reads as "delete this key
// from the chart's defaults" (as with `--set key=null`). The result shares
// nothing with the inputs. Chart defaults are not a layer here: Helm
// applies them under the result.
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
		return v
	}
}
