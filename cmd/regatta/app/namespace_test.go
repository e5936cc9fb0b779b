package app

import (
	"strings"
	"testing"
)

// TestRenderAndPlanShowDefaultNamespaces: namespaced objects without a
// namespace are shown where they will land: a chart's in its release
// namespace, a plain manifest's in default; a cluster-scoped object stays
// without one.
func TestRenderAndPlanShowDefaultNamespaces(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/c1/cluster.yaml": secretFleetCluster,
		"profiles/nsless.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: nsless}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: chart
    helm: {path: chart, releaseName: web, releaseNamespace: team-web}
  - name: plain
    manifests: {path: plain}
`,
		"chart/Chart.yaml":        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-settings}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: web-reader}\n",
		"plain/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n",
	})
	code, stdout, stderr := run(t, "render", "--cluster", "c1", dir)
	if code != 0 {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"  name: web-settings\n  namespace: team-web\n",
		"  name: plain\n  namespace: default\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("render output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "name: web-reader\n  namespace:") {
		t.Errorf("the ClusterRole got a namespace:\n%s", stdout)
	}

	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "clusters")
	git(t, dir, "commit", "-qm", "base")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "head")
	code, stdout, stderr = run(t, "plan", "--base", "HEAD~1", dir)
	if code != 2 { // 2: something changes
		t.Fatalf("plan: exit %d: %s\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"ConfigMap/team-web/web-settings", "ConfigMap/default/plain", "ClusterRole/web-reader"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestRenderAndPlanShowCreatedNamespace: the Namespace that
// helm.createNamespace creates is shown by render, before the chart's
// objects and marked as created, and by plan as a creation.
func TestRenderAndPlanShowCreatedNamespace(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/c1/cluster.yaml": secretFleetCluster,
		"profiles/created.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: created}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: chart
    helm: {path: chart, releaseName: web, releaseNamespace: team-web, createNamespace: true}
`,
		"chart/Chart.yaml":        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-settings}\n",
	})
	code, stdout, stderr := run(t, "render", "--cluster", "c1", dir)
	if code != 0 {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	ns := strings.Index(stdout, "# profile: created, add-on: chart (release namespace, created when missing), source: profiles/created.yaml (spec.addons[0].helm.createNamespace)\n"+
		"apiVersion: v1\nkind: Namespace\nmetadata:\n  annotations:\n    regatta.dev/created-namespace: \"true\"\n  name: team-web\n")
	if cm := strings.Index(stdout, "name: web-settings"); ns < 0 || cm < ns {
		t.Errorf("render output lacks the created Namespace before the chart's objects:\n%s", stdout)
	}

	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "clusters")
	git(t, dir, "commit", "-qm", "base")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "head")
	code, stdout, stderr = run(t, "plan", "--base", "HEAD~1", dir)
	if code != 2 {
		t.Fatalf("plan: exit %d: %s\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "Namespace/team-web") {
		t.Errorf("plan output lacks the created Namespace:\n%s", stdout)
	}
}
