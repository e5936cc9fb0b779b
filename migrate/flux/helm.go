package flux

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// handledHelmRelease are the HelmRelease spec fields the import maps.
var handledHelmRelease = map[string]bool{
	"chart": true, "chartRef": true, "releaseName": true, "targetNamespace": true, "values": true,
	"valuesFrom": true, "dependsOn": true, "test": true, "install": true, "upgrade": true, "postRenderers": true,
	"kubeConfig": true, // carried into cluster.yaml by kubeConfig
}

// helmReleases converts the HelmReleases of a build, ordered by their
// dependsOn (then build order).
func (im *importer) helmReleases(s *scan, b *build) []helmUnit {
	var out []helmUnit
	objs := im.releasesOf(b)
	inBuild := map[string]bool{}
	for _, o := range objs {
		inBuild[o.key()] = true
	}
	for _, o := range objs {
		for i, d := range migrate.List(o.obj, "spec", "dependsOn") {
			dm, _ := d.(map[string]any)
			ns := migrate.Str(dm, "namespace")
			if ns == "" {
				ns = o.namespace()
			}
			if !inBuild[refKey("HelmRelease", ns, migrate.Str(dm, "name"))] {
				im.report.Add(o.doc, fmt.Sprintf("spec.dependsOn[%d]", i), "HelmRelease %s/%s is built by another Kustomization: the order of the profiles (their dependsOn) decides instead", ns, migrate.Str(dm, "name"))
			}
		}
	}
	for _, o := range orderReleases(objs) {
		if h, ok := im.helmRelease(s, o); ok {
			h.key = o.key()
			im.reportSubstituted(o, b.ks)
			out = append(out, h)
		}
	}
	for i := range out {
		for j := range i {
			if out[j].Name == out[i].Name || out[i].Name == kustomizeAddon {
				out[i].Name = fmt.Sprintf("%s-%d", out[i].Name, i)
			}
		}
	}
	return out
}

// releasesOf lists the HelmReleases of a build, in build order.
func (im *importer) releasesOf(b *build) []object {
	var objs []object
	for _, o := range b.objects {
		if o.GetKind() == "HelmRelease" && strings.HasPrefix(o.GetAPIVersion(), groupHelm+"/") {
			objs = append(objs, object{obj: o.Object, doc: im.locate(o.Source, o.GetKind(), o.GetName())})
		}
	}
	return objs
}

// orderReleases sorts releases so that each comes after those it depends
// on; a cycle or a dependency elsewhere keeps the build order.
func orderReleases(objs []object) []object {
	byKey := map[string]object{}
	for _, o := range objs {
		byKey[o.key()] = o
	}
	var out []object
	done, visiting := map[string]bool{}, map[string]bool{}
	var visit func(o object)
	visit = func(o object) {
		if done[o.key()] || visiting[o.key()] {
			return
		}
		visiting[o.key()] = true
		for _, d := range migrate.List(o.obj, "spec", "dependsOn") {
			dm, _ := d.(map[string]any)
			ns := migrate.Str(dm, "namespace")
			if ns == "" {
				ns = o.namespace()
			}
			if dep, ok := byKey[refKey("HelmRelease", ns, migrate.Str(dm, "name"))]; ok {
				visit(dep)
			}
		}
		done[o.key()] = true
		out = append(out, o)
	}
	for _, o := range objs {
		visit(o)
	}
	return out
}

// helmRelease converts one HelmRelease as Flux would install it.
func (im *importer) helmRelease(s *scan, hr object) (helmUnit, bool) {
	h := helmUnit{}
	h.Name = profileName(hr.name())
	src, ok := im.chartSource(s, hr)
	if !ok {
		return h, false
	}
	specm := migrate.Map(hr.obj, "spec")
	ns := migrate.Str(specm, "targetNamespace")
	src.ReleaseName = migrate.Str(specm, "releaseName")
	if src.ReleaseName == "" {
		src.ReleaseName = hr.name()
		if ns != "" {
			src.ReleaseName = ns + "-" + hr.name()
		}
	}
	if ns == "" {
		ns = hr.namespace()
	}
	src.ReleaseNamespace = ns
	if enable, _ := migrate.Get(specm, "test", "enable").(bool); enable {
		src.Test = &spec.HelmTest{Enable: true}
	}
	if create, _ := migrate.Get(specm, "install", "createNamespace").(bool); create && !spec.PresetNamespaces[ns] {
		src.CreateNamespace = true
		im.report.Add(hr.doc, "spec.install.createNamespace", "carried over as helm.createNamespace: regatta creates namespace %s when it is missing, "+
			"and deletes it with the add-on only if regatta created it and nothing else is in it", ns)
	}
	h.Source = src
	h.Wait = !disableWait(specm)
	h.values, h.Source.ValuesFrom = im.releaseValues(s, hr)
	if js, _ := json.Marshal(h.values); strings.Contains(string(js), "ENC[") {
		im.report.Add(hr.doc, "spec.values", "the values hold SOPS-encrypted text (a substitution variable from an encrypted Secret): carried over encrypted, fix them by hand")
	}
	h.patches = im.postRenderers(hr)
	im.reportRelease(hr)
	return h, true
}

func disableWait(specm map[string]any) bool {
	dw, _ := migrate.Get(specm, "install", "disableWait").(bool)
	return dw
}

func (im *importer) reportRelease(hr object) {
	specm := migrate.Map(hr.obj, "spec")
	for _, k := range sortedKeys(specm) {
		field := "spec." + k
		switch {
		case k == "interval":
			im.report.Add(hr.doc, field, "not carried over: regatta renders the chart on every new commit and re-checks at its own --interval")
		case k == "install" || k == "upgrade" || k == "test":
			for _, sub := range sortedKeys(migrate.Map(specm, k)) {
				if (k == "install" && (sub == "disableWait" || sub == "createNamespace")) || (k == "test" && sub == "enable") || isZero(migrate.Get(specm, k, sub)) {
					continue
				}
				im.report.Add(hr.doc, field+"."+sub, "not carried over: regatta applies the chart's objects with server-side apply, not as a Helm release")
			}
		case !handledHelmRelease[k] && !isZero(specm[k]):
			im.report.Add(hr.doc, field, "not carried over")
		}
	}
	if dw, _ := migrate.Get(specm, "upgrade", "disableWait").(bool); dw && !disableWait(specm) {
		im.report.Add(hr.doc, "spec.upgrade.disableWait", "regatta waits on upgrades as on installs (set wait: false on the add-on to never wait)")
	}
}

// chartSource resolves chart.spec.sourceRef or chartRef to a chart
// repository, an OCI registry or a chart folder of this repository.
func (im *importer) chartSource(s *scan, hr object) (spec.HelmSource, bool) {
	if ref := migrate.Map(hr.obj, "spec", "chartRef"); ref != nil {
		return im.chartRef(s, hr, ref)
	}
	cs := migrate.Map(hr.obj, "spec", "chart", "spec")
	ref := migrate.Map(cs, "sourceRef")
	kind, name, ns := migrate.Str(ref, "kind"), migrate.Str(ref, "name"), migrate.Str(ref, "namespace")
	if ns == "" {
		ns = hr.namespace()
	}
	chart, version := migrate.Str(cs, "chart"), migrate.Str(cs, "version")
	for _, k := range sortedKeys(cs) {
		if k != "chart" && k != "version" && k != "sourceRef" && k != "valuesFiles" {
			im.report.Add(hr.doc, "spec.chart.spec."+k, "not carried over")
		}
	}
	switch kind {
	case "HelmRepository":
		repo, ok := s.objects[refKey(kind, ns, name)]
		if !ok {
			im.report.Add(hr.doc, "spec.chart.spec.sourceRef", "HelmRelease %s: HelmRepository %s/%s is not in this repository: not carried over", hr.name(), ns, name)
			return spec.HelmSource{}, false
		}
		im.reportRepository(repo)
		if len(migrate.List(cs, "valuesFiles")) > 0 {
			im.report.Add(hr.doc, "spec.chart.spec.valuesFiles", "values files inside a packaged chart are not carried over")
		}
		return spec.HelmSource{RepositoryURL: migrate.Str(repo.obj, "spec", "url"), ChartName: chart, ChartVersion: version}, true
	case "GitRepository":
		if !im.isSelf(s, ns, name, hr) {
			return spec.HelmSource{}, false
		}
		if version != "" {
			im.report.Add(hr.doc, "spec.chart.spec.version", "Flux ignores the version of a chart from Git; not carried over (regatta would check it against Chart.yaml)")
		}
		h := spec.HelmSource{Path: strings.TrimPrefix(path.Clean("/"+chart), "/")}
		for _, f := range migrate.List(cs, "valuesFiles") {
			if fs, ok := f.(string); ok {
				h.ValuesFiles = append(h.ValuesFiles, strings.TrimPrefix(path.Clean("/"+fs), "/"))
			}
		}
		return h, true
	}
	im.report.Add(hr.doc, "spec.chart.spec.sourceRef", "HelmRelease %s: a chart from a %s is not carried over", hr.name(), kind)
	return spec.HelmSource{}, false
}

func (im *importer) reportRepository(repo object) {
	for _, k := range sortedKeys(migrate.Map(repo.obj, "spec")) {
		if k != "url" && k != "type" && k != "interval" {
			im.report.Add(repo.doc, "spec."+k, "not carried over")
		}
	}
}

// chartRef resolves an OCIRepository chartRef: oci://host/path/chart with
// a tag or semver.
func (im *importer) chartRef(s *scan, hr object, ref map[string]any) (spec.HelmSource, bool) {
	kind, name, ns := migrate.Str(ref, "kind"), migrate.Str(ref, "name"), migrate.Str(ref, "namespace")
	if ns == "" {
		ns = hr.namespace()
	}
	repo, ok := s.objects[refKey(kind, ns, name)]
	if kind != "OCIRepository" || !ok {
		im.report.Add(hr.doc, "spec.chartRef", "HelmRelease %s: %s %s/%s is not an OCIRepository of this repository: not carried over", hr.name(), kind, ns, name)
		return spec.HelmSource{}, false
	}
	url := migrate.Str(repo.obj, "spec", "url")
	i := strings.LastIndexByte(url, '/')
	if !strings.HasPrefix(url, "oci://") || i < len("oci://") {
		im.report.Add(repo.doc, "spec.url", "%q is not an oci:// chart URL: not carried over", url)
		return spec.HelmSource{}, false
	}
	h := spec.HelmSource{RepositoryURL: url[:i], ChartName: url[i+1:]}
	refm := migrate.Map(repo.obj, "spec", "ref")
	h.ChartVersion = migrate.Str(refm, "tag")
	if sv := migrate.Str(refm, "semver"); sv != "" {
		h.ChartVersion = sv
	}
	if migrate.Str(refm, "digest") != "" {
		im.report.Add(repo.doc, "spec.ref.digest", "a chart pinned by digest is not carried over: the tag or semver is used")
	}
	for _, k := range sortedKeys(migrate.Map(repo.obj, "spec")) {
		if k != "url" && k != "ref" && k != "interval" && k != "layerSelector" {
			im.report.Add(repo.doc, "spec."+k, "not carried over")
		}
	}
	return h, true
}

// releaseValues merges valuesFrom (ConfigMaps and Secrets of the builds
// or the cluster folder) and values, as helm-controller does. A
// SOPS-encrypted Secret stays encrypted: it becomes a valuesFrom of its
// file, decrypted at render.
func (im *importer) releaseValues(s *scan, hr object) (map[string]any, []spec.DataReference) {
	out := map[string]any{}
	var refs []spec.DataReference
	for i, r := range migrate.List(hr.obj, "spec", "valuesFrom") {
		rm, _ := r.(map[string]any)
		if ref, ok := s.encryptedRef(hr.namespace(), rm); ok {
			refs = append(refs, ref)
			if len(out) > 0 {
				im.report.Add(hr.doc, fmt.Sprintf("spec.valuesFrom[%d]", i), "an encrypted Secret's values are layered before the other valuesFrom, which are written into values")
			}
			continue
		}
		m, err := s.valuesFrom(hr.namespace(), rm)
		if err != nil {
			im.report.Add(hr.doc, fmt.Sprintf("spec.valuesFrom[%d]", i), "not carried over: %v", err)
			continue
		}
		out = migrate.Merge(out, m)
	}
	return migrate.Merge(out, migrate.Map(hr.obj, "spec", "values")), refs
}

// encryptedRef returns a valuesFrom reference to the file of a
// SOPS-encrypted Secret.
func (s *scan) encryptedRef(ns string, ref map[string]any) (spec.DataReference, bool) {
	kind, name := migrate.Str(ref, "kind"), migrate.Str(ref, "name")
	o, ok := s.objects[refKey(kind, ns, name)]
	if !ok || o.obj["sops"] == nil || o.doc.Name() != name || o.doc.Kind() != kind {
		return spec.DataReference{}, false
	}
	optional, _ := ref["optional"].(bool)
	return spec.DataReference{
		Kind:       kind,
		Name:       name,
		Path:       generalizePath(o.doc.File, s.cluster),
		ValuesKey:  migrate.Str(ref, "valuesKey"),
		TargetPath: migrate.Str(ref, "targetPath"),
		Optional:   optional,
	}, true
}

func (s *scan) valuesFrom(ns string, ref map[string]any) (map[string]any, error) {
	kind, name := migrate.Str(ref, "kind"), migrate.Str(ref, "name")
	key, target := migrate.Str(ref, "valuesKey"), migrate.Str(ref, "targetPath")
	optional, _ := ref["optional"].(bool)
	if key == "" {
		key = "values.yaml"
	}
	o, ok := s.objects[refKey(kind, ns, name)]
	if !ok {
		if optional {
			return nil, nil
		}
		return nil, fmt.Errorf("%s %s/%s is not in this repository", kind, ns, name)
	}
	text, ok := dataValue(o.obj, kind, key)
	if !ok {
		if optional {
			return nil, nil
		}
		return nil, fmt.Errorf("%s %s has no key %s", kind, name, key)
	}
	m := map[string]any{}
	if target != "" {
		escaped := strings.NewReplacer(`\`, `\\`, `,`, `\,`).Replace(text)
		return m, strvals.ParseIntoString(target+"="+escaped, m)
	}
	return m, yaml.Unmarshal([]byte(text), &m)
}

func dataValue(obj map[string]any, kind, key string) (string, bool) {
	if kind == "Secret" {
		if v, ok := migrate.Get(obj, "stringData", key).(string); ok {
			return v, true
		}
		v, ok := migrate.Get(obj, "data", key).(string)
		if !ok {
			return "", false
		}
		b, err := decodeBase64(v)
		return string(b), err == nil
	}
	v, ok := migrate.Get(obj, "data", key).(string)
	return v, ok
}

// postRenderers carries the kustomize patches of postRenderers over as
// overlay patches of the add-on.
func (im *importer) postRenderers(hr object) []spec.Patch {
	var out []spec.Patch
	for i, pr := range migrate.List(hr.obj, "spec", "postRenderers") {
		prm, _ := pr.(map[string]any)
		field := fmt.Sprintf("spec.postRenderers[%d].kustomize", i)
		km := migrate.Map(prm, "kustomize")
		for _, k := range sortedKeys(km) {
			if k != "patches" {
				im.report.Add(hr.doc, field+"."+k, "not carried over")
			}
		}
		out = append(out, im.patches(hr.doc, prm, "kustomize.patches")...)
	}
	return out
}

func decodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(s)
}

// reportSubstituted names each field of a HelmRelease that Flux's
// post-build substitution sets (`${version}` in its file): the import
// writes the value the variable has now, so changing the variable (a
// ConfigMap of substituteFrom, say) no longer changes the release.
func (im *importer) reportSubstituted(hr object, ks object) {
	if hr.doc.Kind() != hr.kind() || hr.doc.Name() != hr.name() {
		return
	}
	for _, f := range substituted(migrate.Map(hr.doc.Obj, "spec"), "spec") {
		now := fmt.Sprint(getPath(hr.obj, f.path))
		what := "the value"
		if f.field == "spec.chart.spec.version" {
			what = "the fixed chartVersion"
		}
		im.report.Add(hr.doc, f.field, "%s is a Flux substitution (postBuild of Kustomization %s): written as %s %q it has now, "+
			"so changing the variable no longer changes this release; edit the imported profile instead (or, in values, a template such as {{ .Cluster.Values.x }})",
			f.text, ks.name(), what, now)
	}
}

// substitutedField is a string field holding ${...}.
type substitutedField struct {
	field string
	path  []string
	text  string
}

// substituted lists the string fields below v that hold a ${...}
// substitution, with their dotted field names.
func substituted(v any, field string, path ...string) []substitutedField {
	switch x := v.(type) {
	case string:
		if strings.Contains(x, "${") {
			return []substitutedField{{field: field, path: slices.Clone(path), text: x}}
		}
	case map[string]any:
		var out []substitutedField
		for _, k := range sortedKeys(x) {
			out = append(out, substituted(x[k], field+"."+k, append(path, k)...)...)
		}
		return out
	case []any:
		var out []substitutedField
		for i, e := range x {
			out = append(out, substituted(e, fmt.Sprintf("%s[%d]", field, i), append(path, fmt.Sprintf("[%d]", i))...)...)
		}
		return out
	}
	return nil
}

// getPath follows map keys and [i] list items from spec.
func getPath(obj map[string]any, path []string) any {
	var v any = migrate.Map(obj, "spec")
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			var i int
			if _, err := fmt.Sscanf(p, "[%d]", &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
