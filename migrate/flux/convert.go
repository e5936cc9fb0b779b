package flux

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// unit is one Kustomization of one cluster, converted. Clusters whose
// units of a Kustomization have the same shape share a profile; path,
// variables, values and post-render patches become per-cluster overlays.
type unit struct {
	ksKey string
	name  string
	doc   *migrate.Doc
	deps  []string
	path  string
	vars  map[string]string
	// patches are the Kustomization's own patches: the add-on's when all
	// clusters of the profile have the same, else overlay patches.
	patches []spec.Patch
	shape   shape
	helm    []helmUnit
}

// shape is what must be equal for clusters to share a profile.
type shape struct {
	Kustomize *spec.KustomizeSource `json:"kustomize,omitempty"`
	OCI       *spec.OCISource       `json:"oci,omitempty"`
	Wait      bool                  `json:"wait"`
	Timeout   string                `json:"timeout,omitempty"`
	PostBuild *spec.PostBuild       `json:"postBuild,omitempty"`
	Helm      []helmShape           `json:"helm,omitempty"`
}

type helmShape struct {
	Name   string          `json:"name"`
	Source spec.HelmSource `json:"source"`
	Wait   bool            `json:"wait"`
}

type helmUnit struct {
	helmShape
	// key is the HelmRelease's Kind/namespace/name, for alerts' event
	// sources.
	key     string
	values  map[string]any
	patches []spec.Patch
}

// empty is true for a Kustomization that deploys nothing itself (it only
// holds other Kustomizations or sources): it gets no profile.
func (u *unit) empty() bool { return u.shape.Kustomize == nil && len(u.helm) == 0 }

// handledKustomization are the Kustomization spec fields the import maps.
var handledKustomization = map[string]bool{
	"path": true, "sourceRef": true, "dependsOn": true, "targetNamespace": true, "patches": true,
	"postBuild": true, "wait": true, "timeout": true, "prune": true, "decryption": true,
	"patchesStrategicMerge": true, "patchesJson6902": true, "kubeConfig": true,
}

// convert turns a cluster's build of a Kustomization into a unit.
func (im *importer) convert(s *scan, b *build) *unit {
	ks := b.ks
	u := &unit{ksKey: ks.key(), name: profileName(ks.name()), doc: ks.doc, path: b.path, vars: b.vars}
	for i, d := range migrate.List(ks.obj, "spec", "dependsOn") {
		dm, _ := d.(map[string]any)
		ns := migrate.Str(dm, "namespace")
		if ns == "" {
			ns = ks.namespace()
		}
		if n := migrate.Str(dm, "name"); n != "" {
			u.deps = append(u.deps, refKey("Kustomization", ns, n))
		} else {
			im.report.Add(ks.doc, fmt.Sprintf("spec.dependsOn[%d]", i), "a dependency without a name: not carried over")
		}
	}
	im.reportKustomization(ks)
	im.reportLeftOut(b)
	u.shape.Wait = waitOf(ks.obj)
	u.shape.Timeout = migrate.Str(ks.obj, "spec", "timeout")
	u.shape.PostBuild = generalize(b.postBuild, s.cluster)
	u.shape.OCI = b.oci
	if b.plain > 0 {
		u.patches = im.kustomizationPatches(ks)
		u.shape.Kustomize = &spec.KustomizeSource{
			TargetNamespace: migrate.Str(ks.obj, "spec", "targetNamespace"),
			Patches:         deletePatches(b.fluxKinds),
		}
	}
	u.helm = im.helmReleases(s, b)
	for _, h := range u.helm {
		u.shape.Helm = append(u.shape.Helm, h.helmShape)
	}
	return u
}

func (im *importer) reportKustomization(ks object) {
	specm := migrate.Map(ks.obj, "spec")
	for _, k := range sortedKeys(specm) {
		field := "spec." + k
		switch {
		case k == "interval" || k == "retryInterval":
			im.report.Add(ks.doc, field, "not carried over: regatta applies every new commit and re-checks at its own --interval")
		case k == "prune" && specm[k] == false:
			im.report.Add(ks.doc, field, "prune: false is not carried over: regatta prunes what a profile no longer renders")
		case k == "decryption" && migrate.Str(specm, "decryption", "provider") != "sops":
			im.report.Add(ks.doc, field, "only SOPS decryption is carried over")
		case k == "decryption":
			im.reportDecryption(ks)
		case k == "healthChecks" || k == "healthCheckExprs":
			im.report.Add(ks.doc, field, "not carried over: regatta waits for every object of the add-on to be healthy instead")
		case !handledKustomization[k] && !isZero(specm[k]):
			im.report.Add(ks.doc, field, "not carried over")
		}
	}
}

// waitOf is Flux's wait: true, or health checks listed (regatta then
// waits for all objects).
func waitOf(obj map[string]any) bool {
	w, _ := migrate.Get(obj, "spec", "wait").(bool)
	return w || len(migrate.List(obj, "spec", "healthChecks")) > 0 || len(migrate.List(obj, "spec", "healthCheckExprs")) > 0
}

// deletePatches leave the Flux objects out of the kustomize add-on: the
// import turns them into add-ons and profiles of their own.
func deletePatches(kinds [][2]string) []spec.Patch {
	var out []spec.Patch
	for _, k := range kinds {
		g, v, _ := strings.Cut(k[0], "/")
		out = append(out, spec.Patch{
			Patch:  fmt.Sprintf("$patch: delete\napiVersion: %s\nkind: %s\nmetadata:\n  name: any\n", k[0], k[1]),
			Target: &spec.PatchSelector{Group: g, Version: v, Kind: k[1]},
		})
	}
	return out
}

// generalize writes a cluster folder in substituteFrom paths as
// clusters/{{ .Cluster.Name }}/, so that clusters with the same layout
// share the profile.
func generalize(pb *spec.PostBuild, cluster string) *spec.PostBuild {
	if pb == nil {
		return nil
	}
	out := &spec.PostBuild{}
	for _, r := range pb.SubstituteFrom {
		r.Path = generalizePath(r.Path, cluster)
		out.SubstituteFrom = append(out.SubstituteFrom, r)
	}
	return out
}

// generalizePath writes clusters/<cluster>/... as clusters/{{ .Cluster.Name }}/...
func generalizePath(p, cluster string) string {
	if rest, ok := strings.CutPrefix(p, path.Join(spec.ClustersDir, cluster)+"/"); ok {
		return path.Join(spec.ClustersDir, clusterNameInPath, rest)
	}
	return p
}

// profileName makes a Kustomization name a valid profile name.
func profileName(name string) string {
	n := strings.ToLower(name)
	n = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, n)
	n = strings.Trim(n, "-")
	if len(n) > validation.DNS1123LabelMaxLength {
		n = strings.TrimRight(n[:validation.DNS1123LabelMaxLength], "-")
	}
	if n == "" {
		n = "imported"
	}
	return n
}

// isZero is true for a field left at its default (false, "", 0, empty).
func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case int, int64, float64:
		return fmt.Sprint(x) == "0"
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// convertedKinds are the Flux kinds the import turns into regatta
// documents (Kustomizations, HelmReleases) or reads as their sources.
var convertedKinds = map[string]bool{
	"Kustomization": true, "HelmRelease": true, "GitRepository": true, "OCIRepository": true,
	"HelmRepository": true, "HelmChart": true, "Bucket": true, "ExternalArtifact": true, "ArtifactGenerator": true,
	"Alert": true, "Provider": true, // alerts/<name>.yaml (alerts.go)
}

// reportLeftOut names each Flux object of a build that the kustomize
// add-on's $patch: delete patches leave out and nothing converts: image
// automation (ImageRepository, ImagePolicy, ImageUpdateAutomation),
// a notification Receiver and the like.
func (im *importer) reportLeftOut(b *build) {
	for _, o := range b.objects {
		if !isFlux(o.GetAPIVersion()) || convertedKinds[o.GetKind()] {
			continue
		}
		d := im.locate(o.Source, o.GetKind(), o.GetName())
		im.report.Add(d, "", "%s %s (%s) is left out of the add-on (a $patch: delete patch) and not carried over: regatta has no %s; "+
			"run its Flux controller beside regatta, or deploy the object with another tool", o.GetKind(), o.GetName(), o.GetAPIVersion(), leftOutWhat(o.GetAPIVersion()))
	}
}

// leftOutWhat names what a Flux API group does that regatta lacks.
func leftOutWhat(apiVersion string) string {
	switch g, _, _ := strings.Cut(apiVersion, "/"); g {
	case "image.toolkit.fluxcd.io":
		return "image automation (it does not scan registries or commit image updates)"
	case "notification.toolkit.fluxcd.io":
		return "Flux Receiver (regatta's push webhook is --webhook-addr, docs/operations.md)"
	}
	return "equivalent"
}
