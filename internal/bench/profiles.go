package bench

import (
	"fmt"
	"strings"
)

// profileYAML is the i-th profile: every cluster with an env label, one
// add-on, and overlays by the cluster's variant label.
func (f Fleet) profileYAML(i int) string {
	name := ProfileName(i)
	mode := "Continuous"
	if DriftDetected(i) {
		mode = "ContinuousWithDriftDetection"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata:
  name: %s
spec:
  clusterSelector:
    matchExpressions:
    - {key: env, operator: Exists}
  syncMode: %s
  addons:
`, name, mode)
	switch f.Kind(i) {
	case KindPlain:
		fmt.Fprintf(&b, "  - name: app\n    manifests: {path: manifests/%s}\n", name)
	case KindKustomize:
		if f.Style == StyleTemplatedPaths {
			fmt.Fprintf(&b, "  - name: app\n    kustomize: {path: \"%s\"}\n", OverlayDir(name, "{{ .Cluster.Labels.variant }}"))
			break
		}
		fmt.Fprintf(&b, "  - name: app\n    kustomize: {path: %s}\n  overlays:\n", OverlayDir(name, Variants[0]))
		for _, v := range Variants[1:] {
			fmt.Fprintf(&b, "  - addon: app\n    clusterSelector: {matchLabels: {variant: %s}}\n    path: %s\n", v, OverlayDir(name, v))
		}
	case KindHelm:
		b.WriteString(f.helmAddon(name))
	}
	return b.String()
}

func (f Fleet) helmAddon(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `  - name: app
    helm:
      repositoryURL: %s
      chartName: %s
      chartVersion: %s
      releaseName: app
      releaseNamespace: %s
      values: {profile: %s, variant: %s}
  overlays:
`, f.ChartRepo, ChartName, ChartVersion, f.Namespace(name), name, Variants[0])
	for _, v := range Variants[1:] {
		fmt.Fprintf(&b, "  - addon: app\n    clusterSelector: {matchLabels: {variant: %s}}\n    values: {variant: %s}\n", v, v)
	}
	return b.String()
}
