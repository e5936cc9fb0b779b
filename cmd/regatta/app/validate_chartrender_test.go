package app

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// chartTenantProfile is team b's profile with a chart from its folder.
const chartTenantProfile = `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata:
  name: team-b-api
spec:
  clusterSelector:
    matchLabels: {team-b: "yes"}
  addons:
  - name: api
    helm:
      path: tenants/team-b/chart
      releaseNamespace: team-b
      values: {n: COUNT}
`

// manyObjects renders .Values.n ConfigMaps: a loop no scan can bound.
const manyObjects = `{{- range (until (int .Values.n)) }}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c{{ . }}, namespace: team-b}
{{- end }}
`

func chartTenantFleet(t *testing.T, template, n string) string {
	return tenantFleet(t, map[string]string{
		teamBProfile:                             strings.Replace(chartTenantProfile, "COUNT", n, 1),
		"tenants/team-b/chart/Chart.yaml":        "apiVersion: v2\nname: api\nversion: 0.1.0\n",
		"tenants/team-b/chart/templates/cm.yaml": template,
	})
}

// spinning loops long without output or memory: only the time bound can
// stop it (manyObjects may reach the memory bound first on a slow runner).
const spinning = `{{- range (until (int .Values.n)) }}{{ range (until 5000) }}{{ end }}{{ end }}
`

// TestValidateBoundsChartRenders: validate renders a tenant's chart in
// workers bounded as the daemon's are; a chart that renders two million
// objects from a value fails validate at the bound with a message naming
// the template, instead of running for minutes and passing (two million
// took 290 s and 1.2 GB in validate's own process), at the memory bound;
// a loop without output stops at the time bound. A hundred thousand
// pass the output bound before the memory bound.
func TestValidateBoundsChartRenders(t *testing.T) {
	for name, tc := range map[string]struct {
		template string
		n        string
		args     []string
		want     string
	}{
		"time":   {spinning, "2000000", []string{"--helm-render-timeout", "1s", "--helm-render-max-output", "1Gi"}, "took longer than 1s (stopped)"},
		"memory": {manyObjects, "2000000", []string{"--helm-render-timeout", "5m", "--helm-render-max-memory", "256Mi", "--helm-render-max-output", "1Gi"}, "used more than 256 MiB of memory (stopped)"},
		"output": {manyObjects, "100000", []string{"--helm-render-timeout", "1m", "--helm-render-max-output", "4Mi"}, "the rendered manifests pass 4 MiB"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := chartTenantFleet(t, tc.template, tc.n)
			code, stdout, stderr := run(t, append(append([]string{"validate"}, tc.args...), dir)...)
			want := "\ntenants/team-b/chart/templates/cm.yaml" // an error, not a warning
			if code != 1 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "helm: template limit exceeded: ") || !strings.Contains(stdout, tc.want) {
				t.Errorf("exit %d, want 1 and the error %q ... %q:\n%s%s", code, want, tc.want, stdout, stderr)
			}
		})
	}
}

// TestValidateSchemaRefsStayInside: a tenant chart's values.schema.json
// that names a host file or a loopback URL fails validate as an error;
// the file's content appears nowhere and the listener is asked nothing
// (validate works offline; before, it fetched and printed the content).
func TestValidateSchemaRefsStayInside(t *testing.T) {
	var requests atomic.Int64
	trap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte(`{"const": "TRAP-CONTENT"}`))
	}))
	defer trap.Close()
	host := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(host, []byte(`{"const": "HOST-FILE-MARKER"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, ref := range map[string]string{"host file": "file://" + host, "loopback": trap.URL + "/s.json"} {
		t.Run(name, func(t *testing.T) {
			dir := tenantFleet(t, map[string]string{
				teamBProfile:                              strings.Replace(chartTenantProfile, "COUNT", "1", 1),
				"tenants/team-b/chart/Chart.yaml":         "apiVersion: v2\nname: api\nversion: 0.1.0\n",
				"tenants/team-b/chart/templates/cm.yaml":  manyObjects,
				"tenants/team-b/chart/values.schema.json": `{"properties": {"n": {"$ref": "` + ref + `"}}}`,
			})
			code, stdout, stderr := run(t, "validate", dir)
			if strings.Contains(stdout+stderr, "MARKER") || strings.Contains(stdout+stderr, "TRAP-CONTENT") {
				t.Errorf("content read outside the chart is printed:\n%s%s", stdout, stderr)
			}
			if n := requests.Load(); n != 0 {
				t.Errorf("the loopback listener got %d requests", n)
			}
			if code != 1 || !strings.Contains(stdout, "chart api: values.schema.json") {
				t.Errorf("exit %d, want 1 and an error naming the schema:\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// TestValidateChartSymlinkOutside: a chart file that links out of the
// chart folder is an error naming the link (it was skipped in silence).
func TestValidateChartSymlinkOutside(t *testing.T) {
	dir := tenantFleet(t, map[string]string{
		teamBProfile:                              strings.Replace(chartTenantProfile, "COUNT", "1", 1),
		"tenants/team-b/chart/Chart.yaml":         "apiVersion: v2\nname: api\nversion: 0.1.0\n",
		"tenants/team-b/chart/templates/cm.yaml":  manyObjects,
		"tenants/team-b/chart/templates/api.yaml": "->../../api/config.yaml",
	})
	code, stdout, stderr := run(t, "validate", dir)
	want := "symlink tenants/team-b/chart/templates/api.yaml points to tenants/team-b/api/config.yaml, outside the chart folder tenants/team-b/chart"
	if code != 1 || !strings.Contains(stdout, want) || strings.Contains(stdout, "warning: tenants/team-b") {
		t.Errorf("exit %d, want 1 and the error %q:\n%s%s", code, want, stdout, stderr)
	}
}

// TestValidatePlacesListItems: an object refused inside a List is placed
// at the item's own file and line, not at the add-on's line.
func TestValidatePlacesListItems(t *testing.T) {
	list := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: fine, namespace: team-b}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata:
    name: smuggled
  rules: []
`
	dir := tenantFleet(t, map[string]string{
		"tenants/team-b/api/list.yaml":          list,
		"tenants/team-b/api/kustomization.yaml": "resources: [config.yaml, list.yaml]\n",
	})
	code, stdout, stderr := run(t, "validate", dir)
	want := "tenants/team-b/api/list.yaml:7: ClusterRole/smuggled: tenant team-b may not deploy cluster-scoped kind"
	if code != 1 || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, want 1 and %q:\n%s%s", code, want, stdout, stderr)
	}
}
