package helm

import (
	"context"
	"reflect"
	"testing"
	"testing/fstest"
)

func TestMergeValues(t *testing.T) {
	a := map[string]any{"x": 1, "m": map[string]any{"a": 1, "b": 2}, "l": []any{1, 2}}
	b := map[string]any{"m": map[string]any{"b": 3, "c": 4}, "l": []any{9}, "x": nil}
	got := MergeValues(a, nil, b)
	want := map[string]any{"x": nil, "m": map[string]any{"a": 1.0, "b": 3.0, "c": 4.0}, "l": []any{9.0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	got["m"].(map[string]any)["a"] = 100
	if a["m"].(map[string]any)["a"] != 1 {
		t.Error("the result aliases an input")
	}
	if got := MergeValues(map[string]any{"k": "s"}, map[string]any{"k": map[string]any{"n": 1}}); !reflect.DeepEqual(got["k"], map[string]any{"n": 1.0}) {
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

// TestValuesNumbersAsHelm: numbers reach the chart as float64, as with
// `helm template -f values.yaml` (values pass through JSON), whether they
// come from the chart's values.yaml, a values file or inline values.
func TestValuesNumbersAsHelm(t *testing.T) {
	m := fstest.MapFS{
		"numbers/Chart.yaml":  {Data: []byte("apiVersion: v2\nname: numbers\nversion: 0.1.0\n")},
		"numbers/values.yaml": {Data: []byte("fromChart: 1000000\n")},
		"numbers/templates/cm.yaml": {Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: numbers
data:
  fromChart: {{ .Values.fromChart | quote }}
  million: {{ .Values.million | quote }}
  small: {{ .Values.small | quote }}
  big: {{ .Values.big | quote }}
  unsigned: {{ .Values.unsigned | quote }}
  half: {{ .Values.half | quote }}
  nested: {{ index .Values.list 0 "n" | quote }}
  asInt: {{ .Values.million | int | quote }}
  kind: {{ kindOf .Values.small | quote }}
`)},
	}
	req := appRequest("")
	req.ChartFS, req.ChartPath, req.ChartName, req.ChartVersion = m, "numbers", "", ""
	req.Values = MergeValues(map[string]any{
		"million":  1000000,
		"small":    int64(3),
		"big":      int64(123456789),
		"unsigned": uint64(2000000),
		"half":     float32(0.5),
		"list":     []any{map[string]any{"n": int32(10000000)}},
	})
	res, err := newTestRenderer(t).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructuredMap(find(all(res.Steps), "ConfigMap", "numbers").Object, "data")
	want := map[string]any{"fromChart": "1e+06", "million": "1e+06", "small": "3", "big": "1.23456789e+08",
		"unsigned": "2e+06", "half": "0.5", "nested": "1e+07", "asInt": "1000000", "kind": "float64"}
	if !reflect.DeepEqual(data, want) {
		t.Errorf("data %v\nwant %v", data, want)
	}
}
