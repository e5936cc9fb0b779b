package helm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRenderChartRepository(t *testing.T) {
	srv := newRepoServer(t)
	res, err := newTestRenderer(t).Render(context.Background(), appRequest(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if res.ChartVersion != "1.2.0" || res.ChartDigest != "sha256:"+indexDigest(t, "fleet-app", "1.2.0") {
		t.Errorf("version %s digest %s", res.ChartVersion, res.ChartDigest)
	}
	golden(t, "fleet-app.yaml", dumpSteps(t, res.Steps))
	want := []string{
		"pre -5: ServiceAccount/shop-migrate Job/shop-migrate",
		"pre 5: Job/shop-seed",
		"main 0: CustomResourceDefinition/widgets.example.regatta.dev ConfigMap/shop-cache ConfigMap/shop-fleet-app-capabilities " +
			"ConfigMap/shop-fleet-app-values Service/shop-fleet-app Deployment/shop-fleet-app Widget/shop-fleet-app",
		"post 0: Job/shop-notify",
	}
	got := summarize(res.Steps)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	main := res.Steps[2].Objects
	if main[0].GetKind() != "CustomResourceDefinition" {
		t.Errorf("main step starts with %s, want the CRD", main[0].GetKind())
	}
	if find(main, "ConfigMap", "shop-cache") == nil {
		t.Error("the cache dependency's ConfigMap is missing")
	}
	if find(main, "Pod", "shop-test-connection") != nil || strings.Contains(strings.Join(got, " "), "test-connection") {
		t.Error("the test hook must be dropped")
	}
	if a := res.Steps[0].Objects[1].GetAnnotations(); a["helm.sh/hook"] != "pre-install,pre-upgrade" || a["helm.sh/hook-weight"] != "-5" {
		t.Errorf("hook annotations not kept: %v", a)
	}
}

func TestVersionSelection(t *testing.T) {
	srv := newRepoServer(t)
	r := newTestRenderer(t)
	cases := map[string]string{"": "1.2.0", "~1.1": "1.1.0", "1.3.0-rc.1": "1.3.0-rc.1", ">=1.3.0-0": "1.3.0-rc.1", "1.x": "1.2.0"}
	for constraint, want := range cases {
		req := appRequest(srv.URL)
		req.ChartVersion = constraint
		v, _, err := r.Resolve(context.Background(), req)
		if err != nil || v != want {
			t.Errorf("%q: got %s %v, want %s", constraint, v, err, want)
		}
	}
	req := appRequest(srv.URL)
	req.ChartVersion = "^9"
	_, err := r.Render(context.Background(), req)
	wantMsg := `chart fleet-app ^9: no version matches "^9" in ` + srv.URL + ` (available: 1.3.0-rc.1, 1.2.0, 1.1.0)`
	if !errors.Is(err, ErrNoVersion) || err.Error() != wantMsg {
		t.Errorf("got %v\nwant %s", err, wantMsg)
	}
}

func TestBrokenChart(t *testing.T) {
	srv := newRepoServer(t)
	req := appRequest(srv.URL)
	req.ChartName, req.ChartVersion = "broken", ""
	_, err := newTestRenderer(t).Render(context.Background(), req)
	want := "chart broken 0.1.0: templates/deployment.yaml:4: at <.Values.missing.field>: nil pointer evaluating interface {}.field"
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	var te *TemplateError
	var ce *ChartError
	if !errors.As(err, &te) || te.File != "templates/deployment.yaml" || te.Line != 4 || !errors.As(err, &ce) {
		t.Errorf("error types: %#v", err)
	}
}

func TestValuesSchemaEnforced(t *testing.T) {
	srv := newRepoServer(t)
	req := appRequest(srv.URL)
	req.Values = map[string]any{"replicaCount": 0}
	_, err := newTestRenderer(t).Render(context.Background(), req)
	if err == nil || !strings.HasPrefix(err.Error(), "chart fleet-app 1.2.0: values don't meet the specifications of the schema") ||
		!strings.Contains(err.Error(), "replicaCount") {
		t.Fatalf("got %v", err)
	}
}

func TestDependencyCondition(t *testing.T) {
	srv := newRepoServer(t)
	req := appRequest(srv.URL)
	req.Values = map[string]any{"cache": map[string]any{"enabled": false}}
	res, err := newTestRenderer(t).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if find(all(res.Steps), "ConfigMap", "shop-cache") != nil {
		t.Error("cache.enabled=false must drop the dependency")
	}
}

func summarize(steps []Step) []string {
	var out []string
	for _, s := range steps {
		var names []string
		for _, o := range s.Objects {
			names = append(names, o.GetKind()+"/"+o.GetName())
		}
		out = append(out, fmt.Sprintf("%s %d: %s", s.Phase, s.Weight, strings.Join(names, " ")))
	}
	return out
}

func all(steps []Step) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, s := range steps {
		out = append(out, s.Objects...)
	}
	return out
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func indexDigest(t *testing.T, name, version string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "repo", "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := parseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	e, err := idx.pick(name, version, "test")
	if err != nil {
		t.Fatal(err)
	}
	return e.Digest
}
