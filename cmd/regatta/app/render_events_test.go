package app

import (
	"path/filepath"
	"strings"
	"testing"
)

// eventNumbersFleet has two event profiles whose templates compare a
// Service's port with 443: one per resource (.Event.Resource) and one
// for all (.Event.Resources).
func eventNumbersFleet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	profile := func(name, oneForEvent string) string {
		return `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: ` + name + `}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  eventTrigger: {eventSourceName: services, oneForEvent: ` + oneForEvent + `}
  addons:
  - name: cm
    template: true
    manifests: {path: ` + name + `}
`
	}
	writeFiles(t, dir, map[string]string{
		"clusters/c1/cluster.yaml": secretFleetCluster,
		"events/services.yaml":     "apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: services}\nspec:\n  resourceSelectors: [{version: v1, kind: Service}]\n",
		"profiles/each.yaml":       profile("each", "true"),
		"profiles/all.yaml":        profile("all", "false"),
		"each/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: "{{ .Event.Name }}", namespace: default}
data:
  tls: "{{ if eq (index .Event.Resource.spec.ports 0).port 443 }}yes{{ else }}no{{ end }}"
`,
		"all/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: all, namespace: default}
data:
  tls: "{{ range .Event.Resources }}{{ if eq (index .spec.ports 0).port 443 }}{{ .metadata.name }} {{ end }}{{ end }}"
`,
		"web.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: eng}\nspec:\n  ports: [{port: 443}]\n",
		"api.json": `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": "eng"}, "spec": {"ports": [{"port": 443}]}}`,
	})
	return dir
}

// TestRenderEventNumbers: an --event-resource file's numbers reach the
// templates as whole numbers (int64), YAML or JSON, so that a template
// compares a port with 443 as it does on a live cluster.
func TestRenderEventNumbers(t *testing.T) {
	dir := eventNumbersFleet(t)
	for _, file := range []string{"web.yaml", "api.json"} {
		code, stdout, stderr := run(t, "render", "--cluster", "c1", "--profile", "each",
			"--event-resource", filepath.Join(dir, file), dir)
		if code != 0 || !strings.Contains(stdout, "tls: \"yes\"") {
			t.Errorf("%s: exit %d, stdout:\n%s\nstderr:\n%s", file, code, stdout, stderr)
		}
	}
	code, stdout, stderr := run(t, "render", "--cluster", "c1", "--profile", "all",
		"--event-resource", filepath.Join(dir, "web.yaml"), "--event-resource", filepath.Join(dir, "api.json"), dir)
	if code != 0 || !strings.Contains(stdout, "tls: 'api web '") {
		t.Errorf("for all: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
