package render

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/spec"
)

// adhoc renders a one-add-on profile over the test repository plus files.
func adhoc(t *testing.T, opts Options, files map[string]string, a spec.Addon, overlays ...spec.Overlay) (*Result, error) {
	t.Helper()
	fsys := memRepo(t)
	for p, data := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(data)}
	}
	prof := withSource(loadProfile(t, fsys, "plain"), a)
	prof.Spec.Overlays = overlays
	return New(opts).Render(context.Background(), Request{FS: fsys, Profile: prof, Cluster: prodCluster()})
}

func TestManifestErrors(t *testing.T) {
	cases := []struct {
		name, file, data, want string
		line                   int
	}{
		{"yaml syntax", "x/bad.yaml", "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: [\n", "x/bad.yaml:5: invalid YAML", 5},
		{"not a mapping", "x/list.yaml", "# c\n- a\n- b\n", "x/list.yaml:2: document is not a mapping", 2},
		{"list item", "x/l.yaml", "apiVersion: v1\nkind: List\nitems:\n- kind: ConfigMap\n", "x/l.yaml:1: List item 0: ConfigMap has no apiVersion", 1},
		{"mis-indented key", "x/i.yaml", "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    a: b\n   c: d\n",
			"x/i.yaml:10: invalid YAML: did not find expected key", 10},
		{"control character", "x/c.yaml", "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"a\x07\"}\n",
			"x/c.yaml:6: invalid YAML: column 20: control character U+0007 is not allowed", 6},
		{"long label key", "x/k.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    " + strings.Repeat("k", 100000) + ": v\n",
			"x/k.yaml:6: invalid YAML: a key of 100000 characters: YAML keys may have at most 1024", 6},
		{"alias bomb", "x/b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  a: &a [x,x,x,x,x,x,x,x,x]\n  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n  f: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
			"x/b.yaml:6: invalid YAML: YAML aliases expand to too much data (an alias bomb?)", 6},
		{"template parse", "x/t.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Cluster.Name }\n", "x/t.yaml:3: template: ", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := adhoc(t, Options{}, map[string]string{c.file: c.data},
				spec.Addon{Name: "x", Template: true, Manifests: &spec.ManifestsSource{Path: "x"}})
			assertError(t, err, "plain", c.want, c.file, c.line)
		})
	}
	_, err := adhoc(t, Options{}, nil, spec.Addon{Name: "x", Manifests: &spec.ManifestsSource{Path: "nowhere"}})
	assertError(t, err, "plain", "profile plain: addon x: nowhere: nowhere does not exist", "nowhere", 0)
}

func TestOverlayPatchesOnHelmSteps(t *testing.T) {
	a := spec.Addon{Name: "demo", Helm: &spec.HelmSource{Path: "charts/demo", ReleaseName: "demo", ReleaseNamespace: "demo"}}
	ov := spec.Overlay{
		ClusterSelector: spec.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
		Addon:           "demo",
		Patches: []spec.Patch{
			{Patch: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: demo-migrate, namespace: demo}\nspec: {backoffLimit: 1}\n"},
			{Patch: "$patch: delete\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo-pre-config, namespace: demo}\n"},
			{Target: &spec.PatchSelector{Kind: "Deployment"}, Patch: "- {op: replace, path: /spec/replicas, value: 9}\n"},
		},
	}
	res, err := adhoc(t, Options{Helm: helmRenderer(t)}, nil, a, ov)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range res.Steps {
		for _, o := range s.Objects {
			got = append(got, s.Phase+":"+o.GetKind()+"/"+o.GetName())
			if _, ok := o.GetAnnotations()[indexAnnotation]; ok {
				t.Errorf("%s kept the index annotation", o.GetName())
			}
		}
	}
	want := "pre:Job/demo-migrate main:CustomResourceDefinition/widgets.example.org main:ConfigMap/demo-settings main:Deployment/demo post:Job/demo-smoke"
	if strings.Join(got, " ") != want {
		t.Errorf("steps\n  %s\nwant\n  %s", strings.Join(got, " "), want)
	}
	objs := res.Objects()
	if n, _, _ := unstructuredInt(objs[0].Object, "spec", "backoffLimit"); n != 1 {
		t.Errorf("hook not patched: backoffLimit %d", n)
	}
	if n, _, _ := unstructuredInt(objs[3].Object, "spec", "replicas"); n != 9 {
		t.Errorf("deployment not patched: replicas %d", n)
	}
}

func TestOverlayPatchErrorNamesTheField(t *testing.T) {
	ov := spec.Overlay{
		ClusterSelector: spec.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
		Addon:           "x",
		Patches:         []spec.Patch{{Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: absent}\ndata: {a: b}\n"}},
	}
	_, err := adhoc(t, Options{}, nil, spec.Addon{Name: "x", Manifests: &spec.ManifestsSource{Path: "addons/extras"}}, ov)
	if err == nil || !strings.Contains(err.Error(), "spec.overlays[0].patches: kustomize: ") {
		t.Errorf("error %v, want it to name spec.overlays[0].patches", err)
	}
}

func TestCanceledContext(t *testing.T) {
	fsys := memRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(Options{}).Render(ctx, Request{FS: fsys, Profile: loadProfile(t, fsys, "plain"), Cluster: prodCluster()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func unstructuredInt(obj map[string]any, fields ...string) (int64, bool, error) {
	cur := any(obj)
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[f]
	}
	n, ok := cur.(int64)
	return n, ok, nil
}

func TestKustomizeTemplateMissingKey(t *testing.T) {
	files := map[string]string{
		"x/kustomization.yaml": "resources: [cm.yaml]\n",
		"x/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Cluster.Values.name }}\n",
	}
	_, err := adhoc(t, Options{}, files, spec.Addon{Name: "x", Template: true, Kustomize: &spec.KustomizeSource{Path: "x"}})
	assertError(t, err, "plain", `x/cm.yaml:4: template: missing key "name" at <.Cluster.Values.name> (add the key, or make it optional: {{ index .Cluster.Values "name" }})`, "x/cm.yaml", 4)
	var te *TemplateError
	if !errors.As(err, &te) || te.Key != "name" || te.Template != "x/cm.yaml" {
		t.Errorf("error %v: want a *TemplateError for key name in x/cm.yaml", err)
	}
}
