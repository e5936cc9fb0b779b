package render

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/spec"
)

// fixtureChartRepo serves render/helm's packaged test charts.
func fixtureChartRepo(t *testing.T) string {
	srv := httptest.NewServer(http.FileServer(http.Dir("helm/testdata/repo")))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestHelmRepositoryValuesLayers renders render/helm's fleet-app chart
// (a dependency, CRDs, hooks, a values schema) from an HTTP chart
// repository with every values layer set.
func TestHelmRepositoryValuesLayers(t *testing.T) {
	url := fixtureChartRepo(t)
	files := map[string]string{
		"values/one.yaml": "layers: {fromValuesFile1: file1, fromValuesFile2: file1, fromValues: file1, fromOverlay: file1}\n",
		"values/two.yaml": "layers: {fromValuesFile2: file2, fromValues: file2, fromOverlay: file2}\nmessage: \"for {{ .Cluster.Name }}\"\n",
	}
	a := spec.Addon{Name: "shop", Helm: &spec.HelmSource{
		RepositoryURL: url, ChartName: "fleet-app", ChartVersion: "1.2.0", ReleaseName: "shop", ReleaseNamespace: "shop",
		ValuesFiles: []string{"values/one.yaml", "values/two.yaml"},
		Values:      map[string]any{"layers": map[string]any{"fromValues": "values", "fromOverlay": "values", "deleteMe": nil}},
	}}
	ov := spec.Overlay{ClusterSelector: spec.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, Addon: "shop",
		Values: map[string]any{"layers": map[string]any{"fromOverlay": "overlay"}}}
	res, err := adhoc(t, Options{Helm: helmRenderer(t)}, files, a, ov)
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, s := range res.Steps {
		phases = append(phases, s.Phase)
	}
	if got := strings.Join(phases, ","); !strings.HasPrefix(got, "pre,") || !strings.Contains(got, ",main,") || !strings.HasSuffix(got, ",post") {
		t.Errorf("phases %s, want pre hooks, main, post hooks", got)
	}
	want := map[string]string{"fromDefaults": "chart", "fromValuesFile1": "file1", "fromValuesFile2": "file2",
		"fromValues": "values", "fromOverlay": "overlay", "hasDeleteMe": "false", "message": "for prod-eu-1"}
	for _, o := range res.Objects() {
		if o.GetName() != "shop-fleet-app-values" {
			continue
		}
		for k, v := range want {
			if got, _, _ := unstructuredString(o.Object, "data", k); got != v {
				t.Errorf("data.%s = %q, want %q", k, got, v)
			}
		}
		if !strings.Contains(o.Source, "fleet-app@1.2.0") {
			t.Errorf("source %q does not name the chart", o.Source)
		}
		return
	}
	t.Errorf("no values ConfigMap rendered")
}

func TestHelmRepositorySchemaError(t *testing.T) {
	url := fixtureChartRepo(t)
	a := spec.Addon{Name: "shop", Helm: &spec.HelmSource{
		RepositoryURL: url, ChartName: "fleet-app", ChartVersion: "1.2.0", ReleaseName: "shop", ReleaseNamespace: "shop",
		Values: map[string]any{"replicaCount": "three"},
	}}
	_, err := adhoc(t, Options{Helm: helmRenderer(t)}, nil, a)
	if err == nil || !strings.Contains(err.Error(), "profile plain: addon shop: profiles/plain.yaml:") ||
		!strings.Contains(err.Error(), "spec.addons[0].helm: chart fleet-app 1.2.0: ") || !strings.Contains(err.Error(), "replicaCount") {
		t.Errorf("error %v: want it located at the helm field, naming chart and replicaCount", err)
	}
	if testing.Verbose() {
		t.Log(err)
	}
}
