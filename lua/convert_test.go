package lua

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestConversionRoundTrip(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":   "x",
			"labels": map[string]any{"app": "web"},
		},
		"spec": map[string]any{
			"replicas":   int64(3),
			"ratio":      0.25,
			"enabled":    true,
			"disabled":   false,
			"ports":      []any{int64(80), int64(443)},
			"containers": []any{map[string]any{"name": "a", "args": []any{"-v"}}},
			"finalizers": []any{},
			"selector":   map[string]any{},
			"big":        int64(1) << 40,
			"negative":   int64(-7),
		},
	}
	got := mustRun(t, "return obj", map[string]any{"obj": obj})
	if !reflect.DeepEqual(got, obj) {
		t.Errorf("round trip changed the object:\n got %#v\nwant %#v", got, obj)
	}
}

func TestConversionOfGoTypes(t *testing.T) {
	in := map[string]any{
		"int":     42,
		"int32":   int32(-3),
		"uint8":   uint8(200),
		"float32": float32(1.5),
		"number":  json.Number("12"),
		"strings": []string{"a", "b"},
		"labels":  map[string]string{"k": "v"},
		"items":   []map[string]any{{"n": 1}},
		"nil":     nil,
		"ptr":     ptr(7),
		"array":   [2]int{1, 2},
	}
	got := mustRun(t, "return v", map[string]any{"v": in})
	want := map[string]any{
		"int": int64(42), "int32": int64(-3), "uint8": int64(200), "float32": 1.5, "number": int64(12),
		"strings": []any{"a", "b"}, "labels": map[string]any{"k": "v"},
		"items": []any{map[string]any{"n": int64(1)}}, "ptr": int64(7), "array": []any{int64(1), int64(2)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %#v\nwant %#v", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

func TestConversionRejectsUnsupportedGoTypes(t *testing.T) {
	_, err := run(t, "return 1", map[string]any{"v": struct{ A int }{1}})
	if err == nil || !strings.Contains(err.Error(), "cannot pass v to Lua") {
		t.Fatalf("got %v", err)
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	if _, err := run(t, "return 1", map[string]any{"v": cyclic}); err == nil {
		t.Fatal("a cyclic map was accepted")
	}
}

func TestConversionFromLua(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want any
	}{
		{"return nil", nil},
		{"return 1", int64(1)},
		{"return 1.5", 1.5},
		{"return 2^53", int64(1) << 53},
		{"return 1e300", 1e300},
		{"return -0.5", -0.5},
		{"return 'x'", "x"},
		{"return true", true},
		{"return {}", map[string]any{}},
		{"return {1, 2, 3}", []any{int64(1), int64(2), int64(3)}},
		{"return {1, 2, nil, 4}", map[string]any{"1": int64(1), "2": int64(2), "4": int64(4)}},
		{"return {1, 2, x = 3}", map[string]any{"1": int64(1), "2": int64(2), "x": int64(3)}},
		{"return {[1.5] = 'a'}", map[string]any{"1.5": "a"}},
		{"return {a = {b = {c = {}}}}", map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{}}}}},
		{"return json.decode('[]')", []any{}},
		{"return json.decode('{}')", map[string]any{}},
		{"return obj.empty", []any{}},
	} {
		got := mustRun(t, tc.src, map[string]any{"obj": map[string]any{"empty": []any{}}})
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.src, got, tc.want)
		}
	}
	if got := mustRun(t, "return 0/0", nil); !math.IsNaN(got.(float64)) {
		t.Errorf("0/0: got %v", got)
	}
}

func TestConversionFromLuaErrors(t *testing.T) {
	for _, src := range []string{
		"local t = {} t.self = t return t",
		"return {f = print}",
		"return {[{}] = 1}",
	} {
		_, err := run(t, src, nil)
		if !errors.Is(err, ErrInvalidResult) {
			t.Errorf("%s: got %v, want ErrInvalidResult", src, err)
		}
	}
}

func TestNumbersStayNumbers(t *testing.T) {
	got := mustRun(t, "return {obj.spec.replicas + 1, obj.spec.ratio * 2}",
		map[string]any{"obj": map[string]any{"spec": map[string]any{"replicas": int64(3), "ratio": 0.25}}})
	if want := []any{int64(4), 0.5}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}
