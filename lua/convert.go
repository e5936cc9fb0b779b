package lua

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	glua "github.com/yuin/gopher-lua"
)

// Conversion between Go values (as decoded from JSON or YAML) and Lua.
//
//	Go                                  Lua
//	nil                                 nil
//	bool                                boolean
//	string                              string
//	int*, uint*, float*, json.Number    number (a float64: integers beyond 2^53 round)
//	map[string]T                        table with string keys
//	[]T                                 table 1..n, marked as an array
//
// Back from Lua, a number without fraction (and within int64) becomes int64,
// any other number float64; a table whose keys are exactly 1..n becomes
// []any, any other table map[string]any (number keys written as decimals);
// an empty table becomes []any when it carries the array mark (it came from a
// Go slice or a JSON array) and map[string]any otherwise.

const maxNesting = 200

// toLua converts Go values into one Lua state.
type toLua struct {
	L       *glua.LState
	arrayMT *glua.LTable // marks tables that came from arrays
	budget  int          // values left to create; < 0 is unlimited
}

func (cv *toLua) value(v any, depth int) (glua.LValue, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("value nested deeper than %d levels", maxNesting)
	}
	if cv.budget == 0 {
		return nil, fmt.Errorf("%w: value has too many elements", ErrMemoryLimit)
	}
	cv.budget--
	switch v := v.(type) {
	case nil:
		return glua.LNil, nil
	case bool:
		return glua.LBool(v), nil
	case string:
		return glua.LString(v), nil
	case float64:
		return glua.LNumber(v), nil
	case int64:
		return glua.LNumber(v), nil
	case int:
		return glua.LNumber(v), nil
	case json.Number:
		f, err := v.Float64()
		return glua.LNumber(f), err
	case map[string]any:
		return mapTable(cv, v, depth)
	case []any:
		return arrayTable(cv, v, depth)
	case []map[string]any:
		return arrayTable(cv, v, depth)
	case map[string]string:
		return mapTable(cv, v, depth)
	case []string:
		return arrayTable(cv, v, depth)
	}
	return cv.reflected(reflect.ValueOf(v), depth)
}

func mapTable[T any](cv *toLua, m map[string]T, depth int) (glua.LValue, error) {
	t := cv.L.CreateTable(0, len(m))
	for k, v := range m {
		lv, err := cv.value(v, depth+1)
		if err != nil {
			return nil, err
		}
		t.RawSetString(k, lv)
	}
	return t, nil
}

func arrayTable[T any](cv *toLua, s []T, depth int) (glua.LValue, error) {
	t := cv.L.CreateTable(len(s), 0)
	for i, v := range s {
		lv, err := cv.value(v, depth+1)
		if err != nil {
			return nil, err
		}
		t.RawSetInt(i+1, lv)
	}
	t.Metatable = cv.arrayMT
	return t, nil
}

// reflected converts the kinds the type switch does not name: other numeric
// types, maps with string keys, slices, arrays and pointers.
func (cv *toLua) reflected(rv reflect.Value, depth int) (glua.LValue, error) {
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return glua.LNumber(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return glua.LNumber(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return glua.LNumber(rv.Float()), nil
	case reflect.Bool:
		return glua.LBool(rv.Bool()), nil
	case reflect.String:
		return glua.LString(rv.String()), nil
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return glua.LNil, nil
		}
		return cv.value(rv.Elem().Interface(), depth+1)
	case reflect.Slice, reflect.Array:
		s := make([]any, rv.Len())
		for i := range s {
			s[i] = rv.Index(i).Interface()
		}
		return arrayTable(cv, s, depth)
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			m := make(map[string]any, rv.Len())
			for it := rv.MapRange(); it.Next(); {
				m[it.Key().String()] = it.Value().Interface()
			}
			return mapTable(cv, m, depth)
		}
	}
	return nil, fmt.Errorf("cannot convert a Go %s to Lua", rv.Type())
}

// toGo converts Lua values to Go.
type toGo struct {
	arrayMT *glua.LTable
	budget  int // bytes of strings and values left; < 0 is unlimited
}

func (cv *toGo) value(lv glua.LValue, depth int) (any, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("table nested deeper than %d levels (a cycle?)", maxNesting)
	}
	if err := cv.spend(8); err != nil {
		return nil, err
	}
	switch v := lv.(type) {
	case *glua.LNilType:
		return nil, nil
	case glua.LBool:
		return bool(v), nil
	case glua.LString:
		return string(v), cv.spend(len(v))
	case glua.LNumber:
		return goNumber(v), nil
	case *glua.LTable:
		return cv.table(v, depth)
	}
	return nil, fmt.Errorf("cannot convert a Lua %s", lv.Type())
}

func (cv *toGo) spend(n int) error {
	if cv.budget < 0 {
		return nil
	}
	if cv.budget -= n; cv.budget < 0 {
		return fmt.Errorf("%w: value too large", ErrMemoryLimit)
	}
	return nil
}

// goNumber returns int64 for whole numbers within int64, float64 otherwise.
func goNumber(n glua.LNumber) any {
	f := float64(n)
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return int64(f)
	}
	return f
}

func (cv *toGo) table(t *glua.LTable, depth int) (any, error) {
	n, isArray := arrayLength(t)
	switch {
	case n == 0 && t.Metatable == cv.arrayMT:
		return []any{}, nil
	case isArray && n > 0:
		out := make([]any, n)
		for i := range out {
			v, err := cv.value(t.RawGetInt(i+1), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return cv.object(t, depth)
}

// arrayLength counts t's keys and reports whether they are exactly 1..n.
func arrayLength(t *glua.LTable) (int, bool) {
	n, top, ints := 0, 0, true
	t.ForEach(func(k, _ glua.LValue) {
		n++
		num, ok := k.(glua.LNumber)
		if !ok || float64(num) != math.Trunc(float64(num)) || num < 1 {
			ints = false
			return
		}
		top = max(top, int(num))
	})
	return n, ints && top == n
}

func (cv *toGo) object(t *glua.LTable, depth int) (any, error) {
	out := map[string]any{}
	var err error
	t.ForEach(func(k, v glua.LValue) {
		if err != nil {
			return
		}
		key, ok := k.(glua.LString)
		if num, isNum := k.(glua.LNumber); isNum {
			key, ok = glua.LString(num.String()), true
		}
		if !ok {
			err = fmt.Errorf("cannot convert a table with a %s key", k.Type())
			return
		}
		out[string(key)], err = cv.value(v, depth+1)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
