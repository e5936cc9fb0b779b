package bench

import (
	"fmt"
	"strings"
	"testing/fstest"
)

// Variants are the overlay variants; a cluster's "variant" label picks one.
var Variants = []string{"a", "b", "c"}

// AddonKind is how a generated profile's add-on is rendered.
type AddonKind string

// Add-on kinds of generated profiles.
const (
	KindPlain     AddonKind = "plain"
	KindKustomize AddonKind = "kustomize"
	KindHelm      AddonKind = "helm"
)

// Styles of generated fleets: how profiles pick what a cluster gets.
const (
	// StyleMixed: plain, Kustomize with overlays: and Helm profiles.
	StyleMixed = "mixed"
	// StyleOverlays: every profile Kustomize, its overlay picked by
	// overlays: with a clusterSelector per variant.
	StyleOverlays = "overlays"
	// StyleTemplatedPaths: every profile Kustomize, its overlay picked by
	// a templated path (…/overlays/{{ .Cluster.Labels.variant }}).
	StyleTemplatedPaths = "templated-paths"
	// StyleTemplateLabel: every profile template: true manifests whose
	// settings ConfigMap reads one label (.Cluster.Labels.variant).
	StyleTemplateLabel = "template-label"
	// StyleTemplateName: the same, reading .Cluster.Name (a render per
	// cluster, by design).
	StyleTemplateName = "template-name"
)

// Styles lists every fleet style.
var Styles = []string{StyleMixed, StyleOverlays, StyleTemplatedPaths, StyleTemplateLabel, StyleTemplateName}

// DefaultStyles are the styles the scale phase runs unless told: all but
// StyleTemplateName, whose render per pair takes the phase past half an
// hour at 10,000 clusters (see internal/bench/results/sessions.md).
var DefaultStyles = []string{StyleMixed, StyleOverlays, StyleTemplatedPaths, StyleTemplateLabel}

// Fleet describes a generated fleet repository.
type Fleet struct {
	// Style is one of Styles; "" is StyleMixed.
	Style string
	// Prefix starts every namespace the fleet's objects live in, so that
	// several fleets can share clusters without sharing objects.
	Prefix   string
	Clusters []FleetCluster
	Profiles int
	// ChartRepo is the URL of the chart repository serving bench-app.
	ChartRepo string
	// Replicas, when set, adds a Deployment of that many replicas to every
	// plain and Kustomize profile (the health phase): on clusters with
	// controllers it becomes Available, on bare ones never.
	Replicas int
}

// FleetCluster is one cluster of a generated fleet.
type FleetCluster struct {
	Name    string
	Env     string
	Variant string
	// Kubeconfig, when set, is written as the cluster's kubeconfig Secret.
	Kubeconfig []byte
}

// NewClusters returns n clusters named c0000..., variants in turn.
func NewClusters(n int) []FleetCluster {
	out := make([]FleetCluster, n)
	for i := range out {
		out[i] = FleetCluster{Name: fmt.Sprintf("c%04d", i), Env: []string{"prod", "staging"}[i%2],
			Variant: Variants[i%len(Variants)]}
	}
	return out
}

// ProfileName returns the name of the i-th profile.
func ProfileName(i int) string { return fmt.Sprintf("p%02d", i) }

// ProfileKind returns the add-on kind of the i-th profile: of every ten,
// three plain YAML, four Kustomize with overlays, three Helm.
func ProfileKind(i int) AddonKind {
	switch i % 10 {
	case 0, 1, 2:
		return KindPlain
	case 3, 4, 5, 6:
		return KindKustomize
	}
	return KindHelm
}

// DriftDetected reports whether the i-th profile uses
// ContinuousWithDriftDetection: one of each kind in every ten.
func DriftDetected(i int) bool {
	switch i % 10 {
	case 0, 3, 7:
		return true
	}
	return false
}

// Namespace returns the namespace of a profile's objects.
func (f Fleet) Namespace(profile string) string { return f.Prefix + "-" + profile }

// Files returns the repository: cluster folders, profiles and add-on
// sources. Overlay generations start at 0.
func (f Fleet) Files() map[string]string {
	files := map[string]string{}
	for _, c := range f.Clusters {
		f.clusterFiles(files, c)
	}
	for i := range f.Profiles {
		name := ProfileName(i)
		files["profiles/"+name+".yaml"] = f.profileYAML(i)
		if f.Style == StyleTemplateLabel || f.Style == StyleTemplateName {
			files["profiles/"+name+".yaml"] = strings.Replace(files["profiles/"+name+".yaml"],
				"  - name: app\n", "  - name: app\n    template: true\n", 1)
		}
		f.addonFiles(files, i)
	}
	return files
}

func (f Fleet) clusterFiles(files map[string]string, c FleetCluster) {
	files["clusters/"+c.Name+"/cluster.yaml"] = clusterYAML(c)
	if c.Kubeconfig != nil {
		files["clusters/"+c.Name+"/kubeconfig.yaml"] = kubeconfigSecret(c.Name, c.Kubeconfig)
	}
}

func clusterYAML(c FleetCluster) string {
	return fmt.Sprintf(`apiVersion: regatta.dev/v1alpha1
kind: Cluster
metadata:
  name: %s
  labels: {env: %s, variant: %s}
spec:
  values: {owner: team-%s}
`, c.Name, c.Env, c.Variant, c.Variant)
}

func kubeconfigSecret(name string, kubeconfig []byte) string {
	lines := strings.Split(strings.TrimRight(string(kubeconfig), "\n"), "\n")
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-kubeconfig\n  namespace: regatta-system\nstringData:\n  value: |\n    %s\n",
		name, strings.Join(lines, "\n    "))
}

// Kind returns the add-on kind of the i-th profile in this fleet's style.
func (f Fleet) Kind(i int) AddonKind {
	switch f.Style {
	case StyleOverlays, StyleTemplatedPaths:
		return KindKustomize
	case StyleTemplateLabel, StyleTemplateName:
		return KindPlain
	}
	return ProfileKind(i)
}

// variantText is what the settings ConfigMap of a plain profile says.
func (f Fleet) variantText() string {
	switch f.Style {
	case StyleTemplateLabel:
		return "{{ .Cluster.Labels.variant }}"
	case StyleTemplateName:
		return "{{ .Cluster.Name }}"
	}
	return "plain"
}

func (f Fleet) addonFiles(files map[string]string, i int) {
	name := ProfileName(i)
	t := objectText{Namespace: f.Namespace(name), Profile: name, Variant: f.variantText(), Generation: "0"}
	objects := objectsYAML(t)
	if f.Replicas > 0 {
		objects += "---\n" + deploymentYAML(t, f.Replicas)
	}
	switch f.Kind(i) {
	case KindPlain:
		files["manifests/"+name+"/00-namespace.yaml"] = namespaceYAML(t)
		files["manifests/"+name+"/objects.yaml"] = objects
	case KindKustomize:
		base := "kustomize/" + name + "/base/"
		files[base+"kustomization.yaml"] = "resources: [namespace.yaml, objects.yaml]\n"
		files[base+"namespace.yaml"] = namespaceYAML(t)
		files[base+"objects.yaml"] = objects
		for _, v := range Variants {
			files[OverlayFile(name, v)] = f.OverlayKustomization(name, v, 0)
		}
	}
}

// OverlayFile is the kustomization of one overlay of a Kustomize profile.
func OverlayFile(profile, variant string) string {
	return "kustomize/" + profile + "/overlays/" + variant + "/kustomization.yaml"
}

// OverlayDir is the folder of OverlayFile.
func OverlayDir(profile, variant string) string {
	return "kustomize/" + profile + "/overlays/" + variant
}

// OverlayKustomization is an overlay that sets the settings ConfigMap's
// variant and generation; a new generation is a change to one overlay.
func (f Fleet) OverlayKustomization(profile, variant string, generation int) string {
	return fmt.Sprintf(`resources: [../../base]
patches:
- patch: |
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings, namespace: %s}
    data: {variant: %q, generation: "%d"}
`, f.Namespace(profile), variant, generation)
}

// mapFS returns files as an in-memory tree.
func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for p, data := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

// Change returns the files of a one-file change to one profile: a new
// generation of one overlay for a Kustomize profile (one variant's
// clusters affected), a changed ConfigMap for a plain one (every cluster).
func (f Fleet) Change(files map[string]string) (profile string, changed map[string]string) {
	for i := range f.Profiles {
		p := ProfileName(i)
		switch f.Kind(i) {
		case KindKustomize:
			return p, map[string]string{OverlayFile(p, Variants[1]): f.OverlayKustomization(p, Variants[1], 1)}
		case KindPlain:
			objs := "manifests/" + p + "/objects.yaml"
			return p, map[string]string{objs: strings.Replace(files[objs], "value 00.0 ", "value 00.0 (changed) ", 1)}
		}
	}
	return "", nil
}
