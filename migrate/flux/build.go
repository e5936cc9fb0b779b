package flux

import (
	"context"
	"errors"
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
	b.postBuild, b.vars = im.postBuild(s, ks)
	if b.oci != nil && im.offline {
		im.unbuiltArtifact(b, "not pulled (--offline)")
		return b
	}
	src := &spec.KustomizeSource{
		Path:            p,
		TargetNamespace: migrate.Str(ks.obj, "spec", "targetNamespace"),
		Patches:         im.kustomizationPatches(ks),
	}
	addon := spec.Addon{Name: "build", Kustomize: src, PostBuild: b.postBuild, OCI: b.oci}
	prof := &spec.Profile{Metadata: spec.ObjectMeta{Name: "import"}, Spec: spec.ProfileSpec{Addons: []spec.Addon{addon}}}
	ctx := im.ctx
	if b.oci != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, im.pullTimeout)
		defer cancel()
	}
	res, err := im.r.Render(ctx, render.Request{
		FS:      im.fsys,
		Profile: prof,
		Cluster: render.ClusterFacts{Name: s.cluster, Values: toAny(b.vars)},
	})
	if err != nil && b.oci != nil {
		why := fmt.Sprintf("the artifact could not be pulled or built (%v)", err)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && im.ctx.Err() == nil {
			why = fmt.Sprintf("the artifact was not pulled within %s", im.pullTimeout)
		}
		im.unbuiltArtifact(b, why)
		return b
	}
	if err != nil {
		im.report.Add(ks.doc, "spec.path", "Kustomization %s: kustomize build of %s failed, not carried over: %v", ks.name(), p, err)
		b.path = ""
		return b
	}
	b.objects = res.Objects()
	b.classify()
	if b.oci != nil {
		im.report.Add(ks.doc, "spec.sourceRef", "Kustomization %s: built from artifact %s as pulled now (%d objects)", ks.name(), b.oci.URL, len(b.objects))
	}
	return b
}

// unbuiltArtifact carries a Kustomization whose OCI artifact the import
// cannot pull (offline, a private registry) as a kustomize add-on with
// its oci source, as it is declared: a translation needs neither the
// network nor the registry's credentials. What only the build shows
// (Flux objects inside the artifact) is not converted, and the report
// says so.
func (im *importer) unbuiltArtifact(b *build, why string) {
	b.plain = 1
	im.report.Add(b.ks.doc, "spec.sourceRef", "Kustomization %s: %s: carried over as a kustomize add-on of %s, path %s, unbuilt: "+
		"Kustomizations and HelmReleases inside the artifact are not converted (check with `regatta render` once the registry is reachable)",
		b.ks.name(), why, b.oci.URL, b.path)
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
	o.SecretRef = im.ociSecretRef(s, repo)
	im.ociProvider(repo)
	for _, k := range sortedKeys(migrate.Map(repo.obj, "spec")) {
		if k != "url" && k != "ref" && k != "interval" && k != "layerSelector" && k != "secretRef" && k != "provider" {
			im.report.Add(repo.doc, "spec."+k, "not carried over")
		}
	}
	return o
}

// ociSecretRef carries an OCIRepository's secretRef as oci.secretRef
// when the Secret's manifest is in this repository (the cluster folder or
// a build): regatta logs in with the .dockerconfigjson of a Secret
// manifest of the repository, decrypted at render. Otherwise it is
// reported with what to write.
func (im *importer) ociSecretRef(s *scan, repo object) *spec.OCISecretRef {
	name := migrate.Str(repo.obj, "spec", "secretRef", "name")
	if name == "" {
		return nil
	}
	sec, ok := s.objects[refKey("Secret", repo.namespace(), name)]
	switch {
	case !ok:
		im.report.Add(repo.doc, "spec.secretRef", "not carried over: Secret %s/%s is not in this repository; regatta logs in with a kubernetes.io/dockerconfigjson Secret manifest of the repository: "+
			"commit it (SOPS-encrypted) and set the add-on's oci.secretRef {name, path}", repo.namespace(), name)
		return nil
	case !hasDockerConfig(sec.obj):
		im.report.Add(repo.doc, "spec.secretRef", "not carried over: Secret %s/%s (%s) has no .dockerconfigjson; regatta logs in only with a kubernetes.io/dockerconfigjson Secret", repo.namespace(), name, sec.doc.File)
		return nil
	}
	ref := &spec.OCISecretRef{Name: name, Path: generalizePath(sec.doc.File, s.cluster)}
	im.report.Add(repo.doc, "spec.secretRef", "carried over as oci.secretRef: the registry login is Secret %s in %s", name, ref.Path)
	return ref
}

func hasDockerConfig(obj map[string]any) bool {
	return migrate.Str(obj, "type") == "kubernetes.io/dockerconfigjson" ||
		migrate.Get(obj, "data", ".dockerconfigjson") != nil || migrate.Get(obj, "stringData", ".dockerconfigjson") != nil
}

// ociProvider reports an OCIRepository's cloud provider login: regatta's
// oci add-on has no workload identity for registries.
func (im *importer) ociProvider(repo object) {
	p := migrate.Str(repo.obj, "spec", "provider")
	if p == "" || p == "generic" {
		return
	}
	im.report.Add(repo.doc, "spec.provider", "provider %s is not carried over: regatta's oci add-on logs in to a registry only with a dockerconfigjson Secret (oci.secretRef), "+
		"not with the cloud's workload identity; commit a Secret with a registry token (SOPS-encrypted) and keep it fresh, or make the repository public", p)
}
