package apply

import (
	"testing"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func deployment(replicas int64, image string, labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "labels": labels},
		"spec": map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": image}},
		}}},
	}}
}

func TestDiffers(t *testing.T) {
	rules, err := jsondiff.CompileIgnoreRules([]jsondiff.IgnoreRule{{Paths: []string{"/spec/replicas"},
		Selector: &jsondiff.Selector{Kind: "Deployment"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := deployment(2, "app:1", map[string]any{"regatta.dev/profile": "p"})
	live := func(mutate func(u *unstructured.Unstructured)) *unstructured.Unstructured {
		u := deployment(2, "app:1", map[string]any{"regatta.dev/profile": "p", "extra": "x"})
		u.Object["status"] = map[string]any{"replicas": int64(2)}
		u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"] =
			[]any{map[string]any{"name": "app", "image": "app:1", "imagePullPolicy": "IfNotPresent"}}
		if mutate != nil {
			mutate(u)
		}
		return u
	}
	cases := map[string]struct {
		live *unstructured.Unstructured
		want bool
	}{
		"defaults and extra fields": {live(nil), false},
		"excluded replicas": {live(func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
		}), false},
		"image changed": {live(func(u *unstructured.Unstructured) {
			u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"] =
				[]any{map[string]any{"name": "app", "image": "app:2"}}
		}), true},
		"label removed":  {live(func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"extra": "x"}) }), true},
		"float replicas": {live(func(u *unstructured.Unstructured) { u.Object["spec"].(map[string]any)["replicas"] = 2.0 }), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := differs(want, tc.live, rules); got != tc.want {
				t.Errorf("differs = %v, want %v", got, tc.want)
			}
		})
	}
	if !differs(want, live(func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
	}), nil) {
		t.Error("without exclusions a replica change is drift")
	}
}

func TestRemovePointer(t *testing.T) {
	doc := map[string]any{"a": map[string]any{"b/c": 1, "d": []any{"x", "y"}, "~e": 2}}
	for _, p := range []string{"/a/b~1c", "/a/d/1", "/a/~0e", "/missing/x", "/a/d/9"} {
		removePointer(doc, p)
	}
	a := doc["a"].(map[string]any)
	if _, ok := a["b/c"]; ok {
		t.Error("~1 escape not removed")
	}
	if _, ok := a["~e"]; ok {
		t.Error("~0 escape not removed")
	}
	if d := a["d"].([]any); len(d) != 2 || d[1] != nil {
		t.Errorf("list item: %v", d)
	}
}
