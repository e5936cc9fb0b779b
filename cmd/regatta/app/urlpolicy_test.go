package app

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRenderURLPolicy: a chart repository on loopback (where an etcd or a
// kubelet could answer) is refused unless --allow-url-prefix names it.
func TestRenderURLPolicy(t *testing.T) {
	srv := httptest.NewServer(http.FileServer(http.Dir("../../../render/helm/testdata/repo")))
	defer srv.Close()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/c1/cluster.yaml": secretFleetCluster,
		"profiles/shop.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: shop}
spec:
  clusterRefs: [c1]
  addons:
  - name: shop
    helm: {repositoryURL: "` + srv.URL + `", chartName: fleet-app, chartVersion: 1.2.0, releaseNamespace: shop}
`,
	})
	cache := t.TempDir()
	code, _, stderr := run(t, "render", "--cluster", "c1", "--helm-cache-dir", cache, dir)
	if code != 1 || !strings.Contains(stderr, "127.0.0.1 is a loopback address") || !strings.Contains(stderr, "--allow-url-prefix") {
		t.Fatalf("loopback chart repository: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "render", "--cluster", "c1", "--helm-cache-dir", cache, "--allow-url-prefix", srv.URL+"/", dir)
	if code != 0 || !strings.Contains(stdout, "fleet-app") {
		t.Fatalf("allowed prefix: exit %d\n%s", code, stderr)
	}
	code, _, stderr = run(t, "render", "--cluster", "c1", "--helm-cache-dir", t.TempDir(), "--allow-url-prefix", "https://charts.example.com/", dir)
	if code != 1 || !strings.Contains(stderr, "not under any --allow-url-prefix (https://charts.example.com/)") {
		t.Fatalf("URL outside the allow list: exit %d\n%s", code, stderr)
	}
}
