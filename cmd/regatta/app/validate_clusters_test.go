package app

import (
	"strings"
	"testing"
)

// TestValidateRefusesObjectsBeyondClusterNamespaces: a profile that
// selects a namespace-scoped cluster entry (spec.namespaces) may render
// only namespaced objects in the entry's namespaces; a Namespace, a
// ClusterRole and a ConfigMap of another namespace are errors at their
// file and line, while the same profile on a whole-cluster entry is valid.
func TestValidateRefusesObjectsBeyondClusterNamespaces(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/shared/cluster.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: shared\n  labels: {env: prod}\n" +
			"spec:\n  namespaces: [team-a, team-b]\n",
		"clusters/whole/cluster.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: whole\n  labels: {env: prod}\nspec: {}\n",
		"profiles/app.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: app}\nspec:\n" +
			"  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: app\n    manifests: {path: app}\n",
		"app/ok.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok, namespace: team-b}\n",
		"app/bad.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-c}\n---\n" +
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\nrules: []\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: elsewhere, namespace: payments}\n",
	})
	code, stdout, stderr := run(t, "validate", dir)
	for _, want := range []string{
		"app/bad.yaml:1: cluster shared: Namespace/team-c: cluster shared is namespace-scoped (spec.namespaces): it may not receive cluster-scoped kind Namespace (core)",
		"app/bad.yaml:5: cluster shared: ClusterRole/reader: cluster shared is namespace-scoped (spec.namespaces): it may not receive cluster-scoped kind rbac.authorization.k8s.io/ClusterRole",
		"app/bad.yaml:10: cluster shared: ConfigMap/payments/elsewhere: namespace payments is not one of cluster shared's namespaces (spec.namespaces: team-a, team-b)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "ok") || strings.Contains(stdout, "cluster whole") || code != 1 || !strings.Contains(stderr, "invalid: 3 errors") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
