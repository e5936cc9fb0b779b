package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportFluxOffline: `regatta import flux --offline` carries a
// Kustomization of an OCIRepository over as declared, without asking the
// registry, and the fleet it writes validates.
func TestImportFluxOffline(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/prod/flux-system/gotk-sync.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: https://git.example/fleet.git}\n",
		"clusters/prod/app.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: app, namespace: flux-system}
spec:
  url: oci://registry.example/fleet/app
  ref: {semver: ">=1.0.0"}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system}
spec:
  path: ./deploy
  sourceRef: {kind: OCIRepository, name: app}
`,
	})
	out := t.TempDir()
	code, stdout, stderr := run(t, "import", "flux", dir, "--out", out, "--offline")
	if code != 0 || !strings.Contains(stdout, "clusters/prod/app.yaml:13: spec.sourceRef: Kustomization app: not pulled (--offline): carried over as a kustomize add-on of oci://registry.example/fleet/app, path deploy, unbuilt") {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	profile, err := os.ReadFile(filepath.Join(out, "profiles", "app.yaml"))
	if err != nil || !strings.Contains(string(profile), "url: oci://registry.example/fleet/app") || !strings.Contains(string(profile), "path: deploy") {
		t.Fatalf("profiles/app.yaml (%v):\n%s", err, profile)
	}
	if code, stdout, stderr := run(t, "validate", out); code != 0 {
		t.Fatalf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
}
