package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/chartserver"
	"github.com/regatta-dev/regatta/reconciler/diff"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render/oci"
)

// ociFleet commits a fleet of one cluster whose profile gains, at head,
// an add-on read from a Flux artifact pushed under a semver range; it
// returns the repository, the artifact's URL and its digest.
func ociFleet(t *testing.T) (dir, url, digest string) {
	t.Helper()
	reg := chartserver.NewOCI(t)
	layer := chartserver.TarGz(t, map[string]string{
		"app/kustomization.yaml": "resources: [cm.yaml]\n",
		"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\n",
	})
	digest = reg.PushArtifact(t, "fleet/app", "1.2.0", "application/vnd.cncf.flux.config.v1+json", oci.FluxContentType, layer)
	url = "oci://" + reg.Host() + "/fleet/app"
	dir = t.TempDir()
	cluster := "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c1, labels: {env: prod}}\n" +
		"spec: {kubeconfig: {secretRef: {name: c1-kubeconfig, namespace: regatta-system, key: value}}}\n"
	profile := "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: app}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n" +
		"  - name: base\n    manifests: {path: base}\n"
	writePlanFiles(t, dir, map[string]string{"clusters/c1/cluster.yaml": cluster, "profiles/app.yaml": profile,
		"base/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: app}\n"})
	planGit(t, dir, "init", "-q", "-b", "main")
	planGit(t, dir, "add", "-A")
	planGit(t, dir, "commit", "-qm", "base")
	writePlanFiles(t, dir, map[string]string{"profiles/app.yaml": profile +
		"  - name: app\n    oci: {url: '" + url + "', semver: '^1'}\n    kustomize: {path: app}\n"})
	planGit(t, dir, "commit", "-qam", "oci add-on")
	return dir, url, digest
}

// TestPlanAndRenderNameOCIDigests: `regatta plan` (text, Markdown, JSON)
// and `regatta render` name the digest an OCI add-on's range resolved to.
func TestPlanAndRenderNameOCIDigests(t *testing.T) {
	dir, url, digest := ociFleet(t)
	host, _, _ := strings.Cut(strings.TrimPrefix(url, "oci://"), "/")
	flags := []string{"--helm-plain-http", "--allow-url-prefix", "http://" + host + "/"}
	for _, format := range []string{"text", "markdown"} {
		code, stdout, stderr := run(t, append([]string{"plan", "--base", "HEAD~1", "-o", format, dir}, flags...)...)
		if code != 2 || !strings.Contains(stdout, "app from "+url+"@"+digest) && !strings.Contains(stdout, "app: "+url+"@"+digest) {
			t.Errorf("plan -o %s: exit %d, no %s@%s\n%s%s", format, code, url, digest, stdout, stderr)
		}
	}
	_, stdout, stderr := run(t, append([]string{"plan", "--base", "HEAD~1", "-o", "json", dir}, flags...)...)
	var r diff.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || len(r.Groups) != 1 {
		t.Fatalf("%v\n%s%s", err, stdout, stderr)
	}
	want := status.Artifact{Addon: "app", URL: url, Digest: digest}
	if a := r.Groups[0].Profiles[0].Artifacts; len(a) != 1 || a[0] != want {
		t.Errorf("plan -o json: artifacts %+v, want %+v", a, want)
	}
	code, stdout, stderr := run(t, append([]string{"render", "--cluster", "c1", dir}, flags...)...)
	if code != 0 || !strings.Contains(stdout, "# profile: app, add-on: app, artifact: "+url+"@"+digest+"\n") {
		t.Errorf("render: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestAllowURLPrefixNamesARegistryEitherWay: --allow-url-prefix allows a
// registry on loopback written as the profile names it (oci://HOST/, or
// oci://HOST/REPOSITORY/) or as its requests are sent (http://HOST/); a
// prefix naming another repository of the registry does not.
func TestAllowURLPrefixNamesARegistryEitherWay(t *testing.T) {
	dir, url, digest := ociFleet(t)
	host, _, _ := strings.Cut(strings.TrimPrefix(url, "oci://"), "/")
	want := "# profile: app, add-on: app, artifact: " + url + "@" + digest + "\n"
	for _, prefix := range []string{"oci://" + host + "/", "oci://" + host + "/fleet/", url, "http://" + host + "/"} {
		code, stdout, stderr := run(t, "render", "--cluster", "c1", "--helm-plain-http", "--allow-url-prefix", prefix, dir)
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("--allow-url-prefix %s: exit %d\n%s%s", prefix, code, stdout, stderr)
		}
	}
	other := "oci://" + host + "/other/"
	code, _, stderr := run(t, "render", "--cluster", "c1", "--helm-plain-http", "--allow-url-prefix", other, dir)
	if code != 1 || !strings.Contains(stderr, "not under any --allow-url-prefix ("+other+")") {
		t.Errorf("--allow-url-prefix %s: exit %d, want 1 and a refusal\n%s", other, code, stderr)
	}
}
