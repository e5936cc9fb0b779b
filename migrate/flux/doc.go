// Package flux imports a Flux repository (clusters/<name>/ with
// Kustomizations, HelmReleases and their sources) into a regatta fleet:
// a cluster per folder of clusters/, a profile per Kustomization, a helm
// add-on per HelmRelease, per-cluster overlays where clusters differ, and
// an alert per notification Alert with its Provider.
// Everything it cannot carry over goes into the report with its file and
// line.
//
// Flux resolves most of a repository only after kustomize has built it:
// a HelmRelease's values are patched per cluster, its HelmRepository
// comes from a base. The importer therefore builds every Kustomization
// with regatta's renderer, as Flux would for that cluster, and converts
// what the build yields.
package flux

// Flux API groups the importer reads.
const (
	groupKustomize    = "kustomize.toolkit.fluxcd.io"
	groupHelm         = "helm.toolkit.fluxcd.io"
	groupSource       = "source.toolkit.fluxcd.io"
	selfSource        = "flux-system"
	fluxGroupSuffix   = ".fluxcd.io"
	clusterLabel      = "cluster"
	clusterNameInPath = "{{ .Cluster.Name }}"
)
