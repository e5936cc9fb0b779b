package flux

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/spec"
)

const kcApps = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  path: ./apps
  sourceRef: {kind: GitRepository, name: flux-system}
  kubeConfig:
`

const kcCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

// Flux's spec.kubeConfig becomes the cluster's way in: a configMapRef with
// a provider becomes spec.kubeconfig.cloud (address, ca.crt and cluster; an
// AKS resource ID alone, which regatta looks up, is not reported), a
// secretRef becomes spec.kubeconfig.secretRef; what regatta cannot carry (a
// per-object ServiceAccount) is reported.
func TestKubeConfigCarried(t *testing.T) {
	fleet, report, err := Import(context.Background(), fstest.MapFS{
		"clusters/eks/flux-system/gotk-sync.yaml": {Data: []byte(nsSync)},
		"clusters/eks/apps.yaml": {Data: []byte(kcApps + "    configMapRef: {name: eks-prod}\n" + `---
apiVersion: v1
kind: ConfigMap
metadata: {name: eks-prod, namespace: flux-system}
data:
  provider: aws
  cluster: arn:aws:eks:eu-west-1:111122223333:cluster/prod
  address: https://ABC.gr7.eu-west-1.eks.amazonaws.com
  serviceAccountName: flux-eks
  ca.crt: |
    -----BEGIN CERTIFICATE-----
    MIIB
    -----END CERTIFICATE-----
`)},
		"clusters/aks/flux-system/gotk-sync.yaml": {Data: []byte(nsSync)},
		"clusters/aks/apps.yaml": {Data: []byte(kcApps + "    configMapRef: {name: aks}\n" + `---
apiVersion: v1
kind: ConfigMap
metadata: {name: aks, namespace: flux-system}
data: {provider: azure, cluster: /subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/managedClusters/aks}
`)},
		"clusters/edge/flux-system/gotk-sync.yaml": {Data: []byte(nsSync)},
		"clusters/edge/apps.yaml":                  {Data: []byte(kcApps + "    secretRef: {name: edge-kubeconfig, key: value.yaml}\n")},
		"apps/cm.yaml":                             {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n")},
	}, Pull{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]spec.KubeconfigSource{}
	for _, c := range fleet.Clusters {
		got[c.Metadata.Name] = c.Spec.Kubeconfig
	}
	eks := got["eks"].Cloud
	if eks == nil || eks.Provider != "aws" || eks.Cluster != "arn:aws:eks:eu-west-1:111122223333:cluster/prod" ||
		eks.Server != "https://ABC.gr7.eu-west-1.eks.amazonaws.com" || eks.CertificateAuthorityData != base64.StdEncoding.EncodeToString([]byte(kcCA)) {
		t.Errorf("eks: %+v", eks)
	}
	if aks := got["aks"].Cloud; aks == nil || aks.Provider != "azure" || aks.Cluster != "/subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/managedClusters/aks" || aks.Server != "" {
		t.Errorf("aks: %+v", aks)
	}
	if ref := got["edge"].SecretRef; ref != (spec.SecretKeyRef{Name: "edge-kubeconfig", Namespace: "flux-system", Key: "value.yaml"}) {
		t.Errorf("edge: %+v", got["edge"])
	}
	var all []string
	for _, f := range report.Findings() {
		all = append(all, f.String())
	}
	findings := strings.Join(all, "\n")
	for _, want := range []string{
		"clusters/eks/apps.yaml:17: data.serviceAccountName: not carried over: regatta uses the workload identity of its own pod",
		"clusters/edge/apps.yaml:8: spec.kubeConfig.secretRef: carried over as spec.kubeconfig.secretRef",
	} {
		if !strings.Contains(findings, want) {
			t.Errorf("report:\n%s\nwant a line with:\n%s", findings, want)
		}
	}
	if strings.Contains(findings, "clusters/aks/apps.yaml:13: data:") {
		t.Errorf("the aks ConfigMap names its cluster, which regatta looks up; reported:\n%s", findings)
	}
	if strings.Contains(findings, "spec.kubeConfig: not carried over") {
		t.Errorf("kubeConfig reported as not carried over:\n%s", findings)
	}
}

// hrRemote is a HelmRelease deploying to a remote cluster; kc completes
// its kubeConfig.
func hrRemote(name, kc string) string {
	return `---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: ` + name + `, namespace: flux-system}
spec:
  chart: {spec: {chart: app, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}}
  kubeConfig:
` + kc
}

const hrRepo = `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: flux-system}
spec: {url: https://charts.example.org}
`

// A HelmRelease's spec.kubeConfig is carried like a Kustomization's: a
// secretRef becomes spec.kubeconfig.secretRef, a configMapRef with a
// provider spec.kubeconfig.cloud; the Kustomization that only builds the
// release needs none; a release going elsewhere, or one going where
// Flux runs, is reported.
func TestHelmReleaseKubeConfigCarried(t *testing.T) {
	gke := `---
apiVersion: v1
kind: ConfigMap
metadata: {name: gke, namespace: flux-system}
data:
  provider: gcp
  address: https://34.0.0.1
  ca.crt: |
    -----BEGIN CERTIFICATE-----
    MIIB
    -----END CERTIFICATE-----
`
	fleet, report, err := Import(context.Background(), fstest.MapFS{
		"clusters/edge/flux-system/gotk-sync.yaml": {Data: []byte(nsSync)},
		"clusters/edge/apps.yaml":                  {Data: []byte(nsApps)},
		"clusters/gke/flux-system/gotk-sync.yaml":  {Data: []byte(nsSync)},
		"clusters/gke/apps.yaml":                   {Data: []byte(strings.ReplaceAll(nsApps, "./apps", "./gke") + gke)},
		"apps/releases.yaml": {Data: []byte(hrRepo + hrRemote("one", "    secretRef: {name: edge-kubeconfig, key: value}\n") +
			hrRemote("other", "    secretRef: {name: elsewhere}\n") +
			"---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: local, namespace: flux-system}\n" +
			"spec:\n  chart: {spec: {chart: app, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}}\n")},
		"gke/releases.yaml": {Data: []byte(hrRepo + hrRemote("app", "    configMapRef: {name: gke}\n"))},
	}, Pull{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]spec.KubeconfigSource{}
	for _, c := range fleet.Clusters {
		got[c.Metadata.Name] = c.Spec.Kubeconfig
	}
	if ref := got["edge"].SecretRef; ref != (spec.SecretKeyRef{Name: "edge-kubeconfig", Namespace: "flux-system", Key: "value"}) {
		t.Errorf("edge: %+v", got["edge"])
	}
	if g := got["gke"].Cloud; g == nil || g.Provider != "gcp" || g.Server != "https://34.0.0.1" || g.CertificateAuthorityData != base64.StdEncoding.EncodeToString([]byte(kcCA)) {
		t.Errorf("gke: %+v", g)
	}
	var all []string
	for _, f := range report.Findings() {
		all = append(all, f.String())
	}
	findings := strings.Join(all, "\n")
	for _, want := range []string{
		"apps/releases.yaml:12: spec.kubeConfig.secretRef: carried over as spec.kubeconfig.secretRef: regatta reads Secret flux-system/edge-kubeconfig",
		"apps/releases.yaml:19: spec.kubeConfig: not carried over: clusters/edge is reached as HelmRelease one says (one cluster per folder)",
		"apps/releases.yaml:25: spec: has no spec.kubeConfig while HelmRelease one has",
	} {
		if !strings.Contains(findings, want) {
			t.Errorf("report:\n%s\nwant a line with:\n%s", findings, want)
		}
	}
	if strings.Contains(findings, "spec.kubeConfig: not carried over\n") || strings.HasSuffix(findings, "spec.kubeConfig: not carried over") ||
		strings.Contains(findings, "Kustomization apps has") || strings.Contains(findings, "apps.yaml:1: spec: has no") {
		t.Errorf("report:\n%s", findings)
	}
}
