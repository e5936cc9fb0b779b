package flux

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/internal/chartserver"
	"github.com/regatta-dev/regatta/render/oci"
)

// TestOCIRepositoryKustomization: a Kustomization whose source is an
// OCIRepository becomes a kustomize add-on with an oci source (its URL,
// semver and interval), built from the artifact; the fields regatta does not carry are
// reported.
func TestOCIRepositoryKustomization(t *testing.T) {
	reg := chartserver.NewOCI(t)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-artifact, namespace: default}\n"
	layer := chartserver.TarGz(t, map[string]string{"deploy/cm.yaml": cm, "deploy/kustomization.yaml": "resources: [cm.yaml]\n"})
	reg.PushArtifact(t, "fleet/app", "1.2.0", "application/vnd.cncf.flux.config.v1+json", oci.FluxContentType, layer)
	url := "oci://" + reg.Host() + "/fleet/app"
	apps := `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: app, namespace: flux-system}
spec:
  url: ` + url + `
  ref: {semver: ">=1.0.0"}
  interval: 5m
  secretRef: {name: registry-creds}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system}
spec:
  path: ./deploy
  sourceRef: {kind: OCIRepository, name: app}
`
	fleet, report, err := Import(context.Background(), fstest.MapFS{
		"clusters/prod/flux-system/gotk-sync.yaml": {Data: []byte(nsSync)},
		"clusters/prod/app.yaml":                   {Data: []byte(apps)},
	}, oci.New(oci.Options{PlainHTTP: true}))
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, p := range fleet.Profiles {
		for _, a := range p.Spec.Addons {
			if a.OCI != nil && a.Kustomize != nil {
				found = a.OCI.URL == url && a.OCI.Semver == ">=1.0.0" && a.OCI.Interval == "5m" && a.Kustomize.Path == "deploy"
			}
		}
	}
	var findings []string
	for _, f := range report.Findings() {
		findings = append(findings, f.String())
	}
	all := strings.Join(findings, "\n")
	if !found {
		t.Fatalf("no kustomize add-on from %s >=1.0.0 every 5m, path deploy: %+v\n%s", url, fleet.Profiles, all)
	}
	if !strings.Contains(all, "spec.secretRef: not carried over") {
		t.Errorf("report:\n%s", all)
	}
}
