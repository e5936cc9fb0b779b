package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestRunOnce runs `regatta run --once` on a local fleet repository whose
// SOPS-encrypted kubeconfig points at a real cluster, as a cron job would.
func TestRunOnce(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "once"}}})
	keyFile := "../../../render/sops/testdata/age.key"
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/once/cluster.yaml":         "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: once, labels: {env: prod}}\nspec: {}\n",
		"clusters/once/kubeconfig.sops.yaml": sopsKubeconfig(t, keyFile, "once", env.Cluster("once").Kubeconfig()),
		"profiles/hello.yaml":                "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: hello}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: chart\n    helm: {path: charts/hello, releaseNamespace: default}\n",
		"charts/hello/Chart.yaml":            "apiVersion: v2\nname: hello\nversion: 0.1.0\n",
		"charts/hello/templates/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}, namespace: {{ .Release.Namespace }}}\ndata: {kube: {{ .Capabilities.KubeVersion.Version | quote }}}\n",
	})
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "fleet")
	code, stdout, stderr := run(t, "run", "--once", "--repo", dir, "--sops-age-key-file", keyFile,
		"--metrics-addr", "", "--helm-cache-dir", t.TempDir(), "--log-level", "warn")
	if code != 0 || !strings.Contains(stdout, "converged=true") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "AGE-SECRET-KEY") || strings.Contains(stderr, "token:") {
		t.Error("a secret reached the log")
	}
	code, stdout, _ = run(t, "status", dir)
	if code != 0 || !strings.Contains(stdout, "hello    Applied") {
		t.Errorf("status after run --once (%d):\n%s", code, stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "status")); err == nil {
		t.Error("status files were written to the working tree")
	}
	code, _, stderr = run(t, "run", "--once")
	if code != 2 || !strings.Contains(stderr, "--repo is required") {
		t.Errorf("without --repo: %d %s", code, stderr)
	}
	code, _, stderr = run(t, "run", "--once", "--repo", dir, "--drift-watches=false", "--drift-interval", "0")
	if code != 2 || !strings.Contains(stderr, "--drift-watches=false needs a --drift-interval") {
		t.Errorf("drift correction off altogether: %d %s", code, stderr)
	}
}
