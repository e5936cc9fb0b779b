package flux

import (
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// build runs kustomize over a Kustomization's path as Flux would for
// this cluster: its targetNamespace, patches and post-build substitution.
func (im *importer) build(s *scan, ks object) *build {
	b := &build{ks: ks}
	p, ok := im.sourcePath(s, ks)
	if !ok {
		return b
	}
	b.path = p
	if migrate.Str(ks.obj, "spec", "sourceRef", "kind") == "OCIRepository" {
		b.oci = im.ociSource(s, ks)
	}
	src := &spec.KustomizeSource{
		Path:            p,
		TargetNamespace: migrate.Str(ks.obj, "spec", "targetNamespace"),
		Patches:         im.kustomizationPatches(ks),
	}
	b.postBuild, b.vars = im.postBuild(s, ks)
	addon := spec.Addon{Name: "build", Kustomize: src, PostBuild: b.postBuild, OCI: b.oci}
	prof := &spec.Profile{Metadata: spec.ObjectMeta{Name: "import"}, Spec: spec.ProfileSpec{Addons: []spec.Addon{addon}}}
	res, err := im.r.Render(im.ctx, render.Request{
		FS:      im.fsys,
		Profile: prof,
		Cluster: render.ClusterFacts{Name: s.cluster, Values: toAny(b.vars)},
	})
	if err != nil {
		im.report.Add(ks.doc, "spec.path", "Kustomization %s: kustomize build of %s failed, not carried over: %v", ks.name(), p, err)
		b.path = ""
		return b
	}
	b.objects = res.Objects()
	b.classify()
	return b
}

// classify counts the plain objects and lists the Flux kinds of a build.
func (b *build) classify() {
	kinds := map[[2]string]bool{}
	for _, o := range b.objects {
		if isFlux(o.GetAPIVersion()) {
			kinds[[2]string{o.GetAPIVersion(), o.GetKind()}] = true
		} else {
			b.plain++
		}
	}
	for k := range kinds {
		b.fluxKinds = append(b.fluxKinds, k)
	}
	sort.Slice(b.fluxKinds, func(i, j int) bool {
		return b.fluxKinds[i][0]+b.fluxKinds[i][1] < b.fluxKinds[j][0]+b.fluxKinds[j][1]
	})
}

func isFlux(apiVersion string) bool {
	g, _, _ := strings.Cut(apiVersion, "/")
	return strings.HasSuffix(g, fluxGroupSuffix)
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sourcePath maps a Kustomization's sourceRef and path to a folder of
// this repository: a GitRepository of this repository, or an
// ExternalArtifact an ArtifactGenerator copies from it.
func (im *importer) sourcePath(s *scan, ks object) (string, bool) {
	kind := migrate.Str(ks.obj, "spec", "sourceRef", "kind")
	name := migrate.Str(ks.obj, "spec", "sourceRef", "name")
	ns := migrate.Str(ks.obj, "spec", "sourceRef", "namespace")
	if ns == "" {
		ns = ks.namespace()
	}
	rel := strings.TrimPrefix(path.Clean("/"+migrate.Str(ks.obj, "spec", "path")), "/")
	switch kind {
	case "GitRepository":
		if !im.isSelf(s, ns, name, ks) {
			return "", false
		}
		return cleanRoot(rel), true
	case "ExternalArtifact":
		return im.artifactPath(s, ks, name, rel)
	case "OCIRepository":
		if _, ok := s.objects[refKey(kind, ns, name)]; ok {
			return cleanRoot(rel), true
		}
		im.report.Add(ks.doc, "spec.sourceRef", "Kustomization %s: OCIRepository %s/%s is not defined in this repository: not carried over", ks.name(), ns, name)
		return "", false
	}
	im.report.Add(ks.doc, "spec.sourceRef", "Kustomization %s: its source (kind %s) is not this repository: not carried over", ks.name(), kind)
	return "", false
}

func cleanRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// isSelf reports whether a GitRepository is this repository: Flux's own
// flux-system source, or one with the same URL.
func (im *importer) isSelf(s *scan, ns, name string, from object) bool {
	if name == selfSource {
		return true
	}
	repo, ok := s.objects[refKey("GitRepository", ns, name)]
	self, selfOK := s.objects[refKey("GitRepository", selfSource, selfSource)]
	if ok && selfOK && sameRepository(repo.obj, self.obj) {
		return true
	}
	msg := "is not defined in this repository"
	if ok {
		msg = fmt.Sprintf("is another repository (%s)", migrate.Str(repo.obj, "spec", "url"))
	}
	im.report.Add(from.doc, "spec.sourceRef", "%s %s: GitRepository %s/%s %s: not carried over", from.kind(), from.name(), ns, name, msg)
	return false
}

// sameRepository: the same URL at the same ref.
func sameRepository(a, b map[string]any) bool {
	return migrate.Str(a, "spec", "url") == migrate.Str(b, "spec", "url") &&
		reflect.DeepEqual(migrate.Get(a, "spec", "ref"), migrate.Get(b, "spec", "ref"))
}

// artifactPath maps a path of an ArtifactGenerator's artifact back to the
// repository through the artifact's copy rules (@alias/dir/** to
// @artifact/dest/).
func (im *importer) artifactPath(s *scan, ks object, name, rel string) (string, bool) {
	for _, o := range s.objects {
		if o.kind() != "ArtifactGenerator" {
			continue
		}
		for i, a := range migrate.List(o.obj, "spec", "artifacts") {
			am, _ := a.(map[string]any)
			if migrate.Str(am, "name") != name {
				continue
			}
			if p, ok := mapCopyRules(migrate.List(am, "copy"), rel); ok {
				return p, true
			}
			im.report.Add(o.doc, fmt.Sprintf("spec.artifacts[%d].copy", i), "artifact %s: no copy rule of the form @source/dir/** -> @artifact/dest/ covers %s: Kustomization %s not carried over", name, rel, ks.name())
			return "", false
		}
	}
	im.report.Add(ks.doc, "spec.sourceRef", "Kustomization %s: no ArtifactGenerator in this repository defines artifact %s: not carried over", ks.name(), name)
	return "", false
}

func mapCopyRules(rules []any, rel string) (string, bool) {
	best, bestLen := "", -1
	for _, r := range rules {
		rm, _ := r.(map[string]any)
		from, to := migrate.Str(rm, "from"), migrate.Str(rm, "to")
		_, src, ok1 := strings.Cut(strings.TrimSuffix(from, "/**"), "/")
		dest, ok2 := strings.CutPrefix(to, "@artifact/")
		if !ok1 || !ok2 || !strings.HasSuffix(from, "/**") {
			continue
		}
		dest = strings.TrimSuffix(dest, "/")
		if rest, ok := underPrefix(rel, dest); ok && len(dest) > bestLen {
			best, bestLen = path.Join(src, rest), len(dest)
		}
	}
	return best, bestLen >= 0
}

func underPrefix(p, prefix string) (string, bool) {
	switch {
	case prefix == "":
		return p, true
	case p == prefix:
		return "", true
	case strings.HasPrefix(p, prefix+"/"):
		return p[len(prefix)+1:], true
	}
	return "", false
}

// kustomizationPatches are spec.patches and the older
// patchesStrategicMerge and patchesJson6902 of a Kustomization.
func (im *importer) kustomizationPatches(ks object) []spec.Patch {
	out := im.patches(ks.doc, ks.obj, "spec.patches")
	for _, p := range migrate.List(ks.obj, "spec", "patchesStrategicMerge") {
		if data, err := yaml.Marshal(p); err == nil {
			out = append(out, spec.Patch{Patch: string(data)})
		}
	}
	for i, p := range migrate.List(ks.obj, "spec", "patchesJson6902") {
		pm, _ := p.(map[string]any)
		data, err := yaml.Marshal(pm["patch"])
		if err != nil || pm["patch"] == nil {
			im.report.Add(ks.doc, fmt.Sprintf("spec.patchesJson6902[%d]", i), "a patch without operations: not carried over")
			continue
		}
		sp := spec.Patch{Patch: string(data)}
		if t := migrate.Map(pm, "target"); t != nil {
			sp.Target = migrate.PatchSelector(t)
		}
		out = append(out, sp)
	}
	return out
}

// patches converts a Flux patches list; its targets use the same fields.
func (im *importer) patches(d *migrate.Doc, obj map[string]any, field string) []spec.Patch {
	var out []spec.Patch
	for i, p := range migrate.List(obj, strings.Split(field, ".")...) {
		pm, _ := p.(map[string]any)
		sp := spec.Patch{Patch: migrate.Str(pm, "patch")}
		if sp.Patch == "" {
			im.report.Add(d, fmt.Sprintf("%s[%d]", field, i), "a patch without an inline patch: not carried over")
			continue
		}
		if t := migrate.Map(pm, "target"); t != nil {
			sp.Target = migrate.PatchSelector(t)
		}
		out = append(out, sp)
	}
	return out
}

// postBuild converts postBuild: substitute becomes the build's variables
// (and the cluster's values), substituteFrom points at the ConfigMap and
// Secret manifests of this repository.
func (im *importer) postBuild(s *scan, ks object) (*spec.PostBuild, map[string]string) {
	pbm := migrate.Map(ks.obj, "spec", "postBuild")
	if pbm == nil {
		return nil, nil
	}
	pb := &spec.PostBuild{}
	vars := map[string]string{}
	for k, v := range migrate.Map(pbm, "substitute") {
		vars[k] = fmt.Sprint(v)
	}
	for i, r := range migrate.List(pbm, "substituteFrom") {
		rm, _ := r.(map[string]any)
		kind, name := migrate.Str(rm, "kind"), migrate.Str(rm, "name")
		optional, _ := rm["optional"].(bool)
		o, ok := s.objects[refKey(kind, ks.namespace(), name)]
		if !ok {
			if !optional {
				im.report.Add(ks.doc, fmt.Sprintf("spec.postBuild.substituteFrom[%d]", i), "%s %s is not in this repository: its variables are not carried over", kind, name)
			}
			continue
		}
		pb.SubstituteFrom = append(pb.SubstituteFrom, spec.DataReference{Kind: kind, Name: name, Path: o.doc.File, Optional: optional})
	}
	return pb, vars
}

// ociSource carries a Kustomization's OCIRepository: its URL, its ref's
// digest, semver or tag (in Flux's order of precedence) and its interval
// (how often the tag is resolved again); the other fields are reported.
func (im *importer) ociSource(s *scan, ks object) *spec.OCISource {
	ns := migrate.Str(ks.obj, "spec", "sourceRef", "namespace")
	if ns == "" {
		ns = ks.namespace()
	}
	repo := s.objects[refKey("OCIRepository", ns, migrate.Str(ks.obj, "spec", "sourceRef", "name"))]
	ref := migrate.Map(repo.obj, "spec", "ref")
	o := &spec.OCISource{URL: migrate.Str(repo.obj, "spec", "url"), Interval: migrate.Str(repo.obj, "spec", "interval")}
	switch {
	case migrate.Str(ref, "digest") != "":
		o.Digest = migrate.Str(ref, "digest")
	case migrate.Str(ref, "semver") != "":
		o.Semver = migrate.Str(ref, "semver")
	default:
		o.Tag = migrate.Str(ref, "tag")
		if o.Tag == "" {
			o.Tag = "latest" // Flux's default
		}
	}
	for _, k := range sortedKeys(migrate.Map(repo.obj, "spec")) {
		if k != "url" && k != "ref" && k != "interval" && k != "layerSelector" {
			im.report.Add(repo.doc, "spec."+k, "not carried over")
		}
	}
	return o
}
