package flux

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
)

const nsSync = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {url: ssh://git@example.org/fleet.git, ref: {branch: main}}
`

const nsApps = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  path: ./apps
  sourceRef: {kind: GitRepository, name: flux-system}
`

const nsReleases = `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: flux-system}
spec: {url: https://charts.example.org}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: created, namespace: flux-system}
spec:
  targetNamespace: made
  chart: {spec: {chart: app, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}}
  install:
    createNamespace: true
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: plain, namespace: flux-system}
spec:
  targetNamespace: given
  chart: {spec: {chart: app, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}}
`

// A HelmRelease's install.createNamespace becomes helm.createNamespace,
// with a finding; without it the add-on creates nothing.
func TestCreateNamespace(t *testing.T) {
	fleet, report, err := Import(context.Background(), fstest.MapFS{
		"clusters/prod/flux-system/gotk-sync.yaml": {Data: []byte(nsSync)},
		"clusters/prod/apps.yaml":                  {Data: []byte(nsApps)},
		"apps/releases.yaml":                       {Data: []byte(nsReleases)},
	}, Pull{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range fleet.Profiles {
		for _, a := range p.Spec.Addons {
			if a.Helm != nil {
				got[a.Helm.ReleaseNamespace] = a.Helm.CreateNamespace
			}
		}
	}
	if !got["made"] || got["given"] || len(got) != 2 {
		t.Errorf("createNamespace by release namespace: %v", got)
	}
	var findings []string
	for _, f := range report.Findings() {
		findings = append(findings, f.String())
	}
	want := "apps/releases.yaml:13: spec.install.createNamespace: carried over as helm.createNamespace: regatta creates namespace made when it is missing, " +
		"and deletes it with the add-on only if regatta created it and nothing else is in it"
	all := strings.Join(findings, "\n")
	if !strings.Contains(all, want) || strings.Contains(all, "createNamespace: not carried over") {
		t.Errorf("report:\n%s\nwant a line:\n%s", all, want)
	}
}
