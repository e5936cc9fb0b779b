package helm

import (
	"context"
	"reflect"
	"testing"
)

func TestMergeValues(t *testing.T) {
	a := map[string]any{"x": 1, "m": map[string]any{"a": 1, "b": 2}, "l": []any{1, 2}}
	b := map[string]any{"m": map[string]any{"b": 3, "c": 4}, "l": []any{9}, "x": nil}
	got := MergeValues(a, nil, b)
	want := map[string]any{"x": nil, "m": map[string]any{"a": 1, "b": 3, "c": 4}, "l": []any{9}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	got["m"].(map[string]any)["a"] = 100
	if a["m"].(map[string]any)["a"] != 1 {
		t.Error("the result aliases an input")
	}
	if got := MergeValues(map[string]any{"k": "s"}, map[string]any{"k": map[string]any{"n": 1}}); !reflect.DeepEqual(got["k"], map[string]any{"n": 1}) {
		t.Errorf("a map replaces a scalar: %v", got)
	}
}

// TestValuesMergeOrder renders chart defaults < valuesFiles < values <
// overlay values, layered by the caller with MergeValues.
func TestValuesMergeOrder(t *testing.T) {
	srv := newRepoServer(t)
	file1 := map[string]any{"layers": map[string]any{"fromValuesFile1": "file1", "fromValuesFile2": "file1", "fromValues": "file1", "fromOverlay": "file1"}}
	file2 := map[string]any{"layers": map[string]any{"fromValuesFile2": "file2", "fromValues": "file2", "fromOverlay": "file2"}}
	values := map[string]any{"layers": map[string]any{"fromValues": "values", "fromOverlay": "values", "deleteMe": nil}}
	overlay := map[string]any{"layers": map[string]any{"fromOverlay": "overlay"}, "message": "from-overlay"}
	req := appRequest(srv.URL)
	req.Values = MergeValues(file1, file2, values, overlay)
	res, err := newTestRenderer(t).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	cm := find(all(res.Steps), "ConfigMap", "shop-fleet-app-values")
	data, _, _ := unstructuredMap(cm.Object, "data")
	want := map[string]any{"fromDefaults": "chart", "fromValuesFile1": "file1", "fromValuesFile2": "file2",
		"fromValues": "values", "fromOverlay": "overlay", "message": "from-overlay", "hasDeleteMe": "false"}
	if !reflect.DeepEqual(data, want) {
		t.Errorf("data %v\nwant %v", data, want)
	}
}

func unstructuredMap(obj map[string]any, key string) (map[string]any, bool, error) {
	m, ok := obj[key].(map[string]any)
	return m, ok, nil
}
