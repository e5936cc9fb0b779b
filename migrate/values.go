package migrate

import "reflect"

// Common returns what every map of ms holds equally: keys whose values
// are equal in all of them, and maps common in turn. Merging a map's
// Diff over Common gives the map back.
func Common(ms []map[string]any) map[string]any {
	if len(ms) == 0 {
		return nil
	}
	out := map[string]any{}
	for k, v := range ms[0] {
		vals := make([]any, len(ms))
		all := true
		for i, m := range ms {
			if vals[i], all = m[k]; !all {
				break
			}
		}
		if !all {
			continue
		}
		if sub, ok := allMaps(vals); ok {
			if c := Common(sub); len(c) > 0 {
				out[k] = c
			}
			continue
		}
		if allEqual(vals) {
			out[k] = v
		}
	}
	return out
}

func allMaps(vals []any) ([]map[string]any, bool) {
	out := make([]map[string]any, len(vals))
	for i, v := range vals {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		out[i] = m
	}
	return out, true
}

func allEqual(vals []any) bool {
	for _, v := range vals[1:] {
		if !reflect.DeepEqual(v, vals[0]) {
			return false
		}
	}
	return true
}

// Diff returns what m holds beyond base, where base is Common of a set
// that includes m.
func Diff(m, base map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		b, ok := base[k]
		switch {
		case !ok:
			out[k] = v
		case reflect.DeepEqual(v, b):
		default:
			vm, ok1 := v.(map[string]any)
			bm, ok2 := b.(map[string]any)
			if !ok1 || !ok2 {
				out[k] = v
				continue
			}
			if d := Diff(vm, bm); len(d) > 0 {
				out[k] = d
			}
		}
	}
	return out
}

// Merge merges b over a, maps key by key, as Helm merges values; a and b
// are left as they are.
func Merge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		am, ok1 := out[k].(map[string]any)
		bm, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = Merge(am, bm)
		} else {
			out[k] = v
		}
	}
	return out
}
