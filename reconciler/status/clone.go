package status

import "reflect"

// deepCopy returns a copy of v that shares no map, slice, pointer or
// interface value with it, nil and empty kept apart, so that
// reflect.DeepEqual(deepCopy(v), v) holds and stays true of the copy
// whatever later happens to v. Map keys, unexported struct fields (a
// time.Time's location) and funcs and channels are shared. v holds no
// cycle: a status record is a tree.
func deepCopy[T any](v T) T {
	return cloneValue(reflect.ValueOf(&v).Elem()).Interface().(T)
}

// cloneValue is deepCopy of a reflect.Value, whose copy it returns as a
// new settable value of the same type.
func cloneValue(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(cloneValue(v.Elem()))
			out.Set(p)
		}
	case reflect.Interface:
		if !v.IsNil() {
			out.Set(cloneValue(v.Elem()))
		}
	case reflect.Map:
		cloneMap(v, out)
	case reflect.Slice:
		if !v.IsNil() {
			out.Set(reflect.MakeSlice(v.Type(), v.Len(), v.Len()))
			cloneElems(v, out)
		}
	case reflect.Array:
		cloneElems(v, out)
	case reflect.Struct:
		cloneStruct(v, out)
	default:
		out.Set(v)
	}
	return out
}

// cloneMap sets out, a map-typed value, to a deep copy of the map v.
func cloneMap(v, out reflect.Value) {
	if v.IsNil() {
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), v.Len())
	for it := v.MapRange(); it.Next(); {
		m.SetMapIndex(it.Key(), cloneValue(it.Value()))
	}
	out.Set(m)
}

// cloneElems copies the elements of v (a slice or an array) deeply into
// out, of the same type and length.
func cloneElems(v, out reflect.Value) {
	for i := range v.Len() {
		out.Index(i).Set(cloneValue(v.Index(i)))
	}
}

// cloneStruct sets out to v, then replaces its exported fields with deep
// copies (unexported ones cannot be set through reflection: they stay
// shared).
func cloneStruct(v, out reflect.Value) {
	out.Set(v)
	for i := range v.NumField() {
		if f := out.Field(i); f.CanSet() {
			f.Set(cloneValue(v.Field(i)))
		}
	}
}
