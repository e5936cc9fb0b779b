package render

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/provider"
)

// objectOf gives the object kyaml's MarshalJSON read back by
// apimachinery's decoder gives, value for value and type for type, or the
// same failure: scalars of every YAML kind, numbers at the edges of int64
// and of JSON's integer form, and what the round trip changes or refuses.
func TestObjectOfMatchesJSONRoundTrip(t *testing.T) {
	values := []string{
		`3`, `-7`, `0`, `1.0`, `1.5`, `-0.0`, `1e3`, `1e20`, `1e21`, `1.5e-7`, `0.000001`,
		`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `18446744073709551616`,
		`0x1F`, `0o17`, `017`, `.inf`, `-.inf`, `.nan`, `!!float 1`, `!!int "12"`, `!!str 12`, `"12"`,
		`true`, `True`, `yes`, `off`, `null`, `~`, `""`, `2024-01-01`, `2001-12-14t21:59:43.10-05:00`,
		`!!timestamp 2024-01-01`, `!!binary aGVsbG8=`, `!!binary /w==`, `"caf\u00e9 <&>"`, `|` + "\n    two\n    lines",
		`{}`, `[]`, `[1, 2.5, "x", null, {a: 1.0}]`, `{1: a}`, `{true: b}`, `{nested: {deep: [1e3, {x: -0.0}]}}`,
	}
	rf := provider.NewDefaultDepProvider().GetResourceFactory()
	for _, v := range values {
		doc := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations: {a: b}\nvalue: %s\n", v)
		res, err := rf.SliceFromBytes([]byte(doc))
		if err != nil || len(res) != 1 {
			t.Logf("%s: kustomize refuses it (%v): nothing to compare", v, err)
			continue
		}
		want, wantErr := objectViaJSON(res[0])
		got, gotErr := objectOf(res[0])
		if (wantErr == nil) != (gotErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("value %s:\n got %#v (%v)\nwant %#v (%v)", v, got["value"], gotErr, want["value"], wantErr)
		}
	}
}

// Anchors, aliases and merge keys resolve as in the round trip.
func TestObjectOfResolvesAliases(t *testing.T) {
	doc := `apiVersion: v1
kind: ConfigMap
metadata:
  name: x
base: &base {port: 80, weight: 1.0}
other:
  <<: *base
  port: 8080
copy: *base
`
	res, err := provider.NewDefaultDepProvider().GetResourceFactory().SliceFromBytes([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want, err := objectViaJSON(res[0])
	if err != nil {
		t.Fatal(err)
	}
	got, err := objectOf(res[0])
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v (%v)\nwant %#v", got, err, want)
	}
	if got["other"].(map[string]any)["weight"] != int64(1) {
		t.Errorf("merged weight %#v, want int64(1)", got["other"])
	}
}

// The origin annotation kustomize writes names the object's file: a path
// under the root, a remote base, or the kustomization that generated it.
func TestOriginOf(t *testing.T) {
	cases := map[string]string{
		"path: base/deploy.yaml\n":                                        "apps/web/base/deploy.yaml",
		"path: deploy.yaml\nrepo: https://github.com/org/repo\nref: v1\n": "https://github.com/org/repo//deploy.yaml",
		"configuredIn: overlays/a/kustomization.yaml\nconfiguredBy:\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n": "apps/web/overlays/a/kustomization.yaml",
		"path: \"123\"\n": "apps/web/123",
		"{not yaml":       "apps/web",
		"":                "apps/web",
	}
	for origin, want := range cases {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAnnotations(map[string]string{originAnnotation: origin, "keep": "me"})
		if got := originOf(u, "apps/web", false); got != want {
			t.Errorf("origin %q: %q, want %q", origin, got, want)
		}
		if ann := u.GetAnnotations(); len(ann) != 1 || ann["keep"] != "me" {
			t.Errorf("origin %q: annotations left %v", origin, ann)
		}
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAnnotations(map[string]string{originAnnotation: "path: a.yaml\n"})
	if got := originOf(u, "r", true); got != "r/a.yaml" || len(u.GetAnnotations()) != 1 {
		t.Errorf("kept: %q, annotations %v", got, u.GetAnnotations())
	}
}
