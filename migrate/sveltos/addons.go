package sveltos

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// fluxSources are the policyRef and kustomizationRef kinds whose path
// names a folder of a Flux source (given as Options.Source).
var fluxSources = map[string]bool{"GitRepository": true, "OCIRepository": true, "Bucket": true}

// policyRefs turns each referenced ConfigMap or Secret into a manifests
// add-on over its data written out as files, and each Flux-source ref
// into a manifests add-on over its path.
func (im *importer) policyRefs(d *migrate.Doc, s map[string]any, wait, event bool) []spec.Addon {
	var out []spec.Addon
	for i, r := range migrate.List(s, "policyRefs") {
		rm := asMap(r)
		field := fmt.Sprintf("spec.policyRefs[%d]", i)
		kind, name := migrate.Str(rm, "kind"), migrate.Str(rm, "name")
		if dt := migrate.Str(rm, "deploymentType"); dt == "Local" {
			im.report.Add(d, field+".deploymentType", "Local (the management cluster) is not carried over")
			continue
		}
		var p string
		var templated bool
		if fluxSources[kind] {
			p = im.sourcePath(d, field, migrate.Str(rm, "path"))
		} else {
			p, templated = im.writeData(d, field, kind, refNamespace(d, rm), name, event)
		}
		if p == "" {
			continue
		}
		out = append(out, spec.Addon{Name: addonName("policy", name, i), Manifests: &spec.ManifestsSource{Path: p}, Wait: waitField(wait),
			Template: event && templated})
	}
	return out
}

// sourcePath checks a path of the Flux source given as Options.Source.
func (im *importer) sourcePath(d *migrate.Doc, field, p string) string {
	if im.source == nil {
		im.report.Add(d, field, "a path of a Flux source is carried over only with --source (a checkout of that source): not carried over")
		return ""
	}
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	if p == "" {
		p = "."
	}
	if _, err := fs.Stat(im.source, p); err != nil {
		im.report.Add(d, field+".path", "%s is not in --source: not carried over", p)
		return ""
	}
	return path.Join(sourceDir, p)
}

// writeData writes the manifests of a ConfigMap or Secret's data keys
// into the fleet and returns their folder, and whether Sveltos renders
// them as a template. For an event profile, a template's Sveltos data
// are rewritten as regatta's (eventTemplate) into a folder of its own.
func (im *importer) writeData(d *migrate.Doc, field, kind, ns, name string, event bool) (string, bool) {
	src := im.find(kind, ns, name)
	if src == nil {
		im.report.Add(d, field, "%s %s was not given as a file: not carried over", kind, name)
		return "", false
	}
	if _, ok := migrate.Map(src.Obj, "metadata", "annotations")[luaAnnotation]; ok {
		im.report.Add(src, "metadata.annotations", "a Sveltos Lua policy (%s): its Lua generates the resources at deploy time from management-cluster resources; not carried over "+
			"(write the resources, or generate them with a jsonnet or ytt add-on from the cluster's labels and values: docs/format.md)", luaAnnotation)
		return "", false
	}
	v, templated := isTemplate(src)
	data, err := dataOf(src)
	if err != nil {
		im.report.Add(src, "data", "not carried over: %v", err)
		return "", false
	}
	if event && !templated {
		templated = eventInstantiated(src, data)
	}
	if templated && !event {
		im.report.Add(src, "metadata.annotations", "a Sveltos template (%s: %q; Sveltos reads any value as true) is carried over as it is: regatta's template data differ (.Cluster.Labels, .Cluster.Values); review the manifests", templateAnnotation, v)
	}
	if kind == "Secret" {
		im.report.Add(src, "data", "the Secret's manifests are written out in plain text: encrypt them with SOPS")
	}
	dir := path.Join(policiesDir, strings.ToLower(kind), nsOr(src.Namespace()), name)
	if event && templated {
		dir = path.Join(policiesDir, "events", strings.ToLower(kind), nsOr(src.Namespace()), name)
	}
	for _, k := range sortedKeys(data) {
		file := k
		if !strings.HasSuffix(file, ".yaml") && !strings.HasSuffix(file, ".yml") && !strings.HasSuffix(file, ".json") {
			file += ".yaml"
		}
		content := data[k]
		if event && templated {
			content = im.eventTemplate(src, "data."+k, content)
		}
		im.fleet.Files[path.Join(dir, file)] = []byte(content)
	}
	return dir, templated
}

// refNamespace is a reference's namespace; a Profile's references are in
// the Profile's namespace.
func refNamespace(d *migrate.Doc, ref map[string]any) string {
	if ns := migrate.Str(ref, "namespace"); ns != "" || d.Kind() != kindProfile {
		return ns
	}
	return d.Namespace()
}

func nsOr(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// find looks a ConfigMap or Secret up by namespace and name, or by name
// alone when the reference leaves the namespace to the cluster's.
func (im *importer) find(kind, ns, name string) *migrate.Doc {
	if d, ok := im.data[kind+"/"+ns+"/"+name]; ok {
		return d
	}
	var keys []string
	for k := range im.data {
		if strings.HasPrefix(k, kind+"/") && strings.HasSuffix(k, "/"+name) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if ns == "" && len(keys) > 0 {
		return im.data[keys[0]]
	}
	return nil
}

// dataOf returns a ConfigMap's data or a Secret's decoded data.
func dataOf(d *migrate.Doc) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range migrate.Map(d.Obj, "data") {
		s := fmt.Sprint(v)
		if d.Kind() == "Secret" {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("data.%s: %w", k, err)
			}
			s = string(b)
		}
		out[k] = s
	}
	for k, v := range migrate.Map(d.Obj, "stringData") {
		out[k] = fmt.Sprint(v)
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// addonName makes a unique, valid add-on name.
func addonName(prefix, name string, i int) string {
	n := strings.ToLower(prefix + "-" + name)
	n = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, n)
	if len(n) > 55 {
		n = n[:55]
	}
	return fmt.Sprintf("%s-%d", strings.Trim(n, "-"), i)
}

// handledChart are the helmCharts fields the import maps.
var handledChart = map[string]bool{
	"repositoryURL": true, "repositoryName": true, "chartName": true, "chartVersion": true,
	"releaseName": true, "releaseNamespace": true, "values": true, "valuesFrom": true,
	"helmChartAction": true, "options": true,
}

// helmCharts converts helmCharts: values, then valuesFrom over them (as
// Sveltos merges), written inline.
func (im *importer) helmCharts(d *migrate.Doc, s map[string]any, wait bool) []spec.Addon {
	var out []spec.Addon
	for i, c := range migrate.List(s, "helmCharts") {
		cm := asMap(c)
		field := fmt.Sprintf("spec.helmCharts[%d]", i)
		if a := migrate.Str(cm, "helmChartAction"); a == "Uninstall" {
			im.report.Add(d, field+".helmChartAction", "Uninstall is not carried over: remove the chart instead")
			continue
		}
		h, ok := im.chart(d, field, cm)
		if !ok {
			continue
		}
		w := wait
		if ow, _ := migrate.Get(cm, "options", "wait").(bool); ow {
			w = true
		}
		out = append(out, spec.Addon{Name: addonName("helm", h.ReleaseName, i), Helm: h, Wait: waitField(w)})
	}
	return out
}

// chart converts one helmCharts entry; false when its values cannot be
// carried over (a Sveltos template): a chart installed with its default
// values instead (a CNI without the cluster's pod CIDR) is worse than
// none, so the add-on is refused.
func (im *importer) chart(d *migrate.Doc, field string, cm map[string]any) (*spec.HelmSource, bool) {
	h := &spec.HelmSource{
		RepositoryURL:    migrate.Str(cm, "repositoryURL"),
		ChartName:        migrate.Str(cm, "chartName"),
		ChartVersion:     migrate.Str(cm, "chartVersion"),
		ReleaseName:      migrate.Str(cm, "releaseName"),
		ReleaseNamespace: migrate.Str(cm, "releaseNamespace"),
	}
	// Sveltos names repository charts repositoryName/chart.
	if rn := migrate.Str(cm, "repositoryName"); rn != "" {
		h.ChartName = strings.TrimPrefix(h.ChartName, rn+"/")
	}
	values, ok := im.values(d, field+".values", migrate.Str(cm, "values"))
	for j, r := range migrate.List(cm, "valuesFrom") {
		m, fromOK := im.valuesFrom(d, fmt.Sprintf("%s.valuesFrom[%d]", field, j), asMap(r))
		values, ok = migrate.Merge(values, m), ok && fromOK
	}
	if !ok {
		im.report.Add(d, field, "chart %s (release %s) not carried over: its values could not be (see the finding at its values); "+
			"installing it with the chart's default values instead could break the cluster. Write the values with regatta's templates "+
			"(.Cluster.Labels, .Cluster.Values: docs/format.md, Templates) and add the chart by hand", h.ChartName, h.ReleaseName)
		return nil, false
	}
	if len(values) > 0 {
		h.Values = values
	}
	if rt, _ := migrate.Get(cm, "options", "runTests").(bool); rt {
		h.Test = &spec.HelmTest{Enable: true}
	}
	im.createNamespace(d, field, cm, h)
	for k, v := range migrate.Map(cm, "options") {
		if k != "wait" && k != "runTests" && k != "timeout" && k != "installOptions" && v != false {
			im.report.Add(d, field+".options."+k, "not carried over")
		}
	}
	for k := range cm {
		if !handledChart[k] {
			im.report.Add(d, field+"."+k, "not carried over")
		}
	}
	return h, true
}

// createNamespace carries options.installOptions.createNamespace over,
// true unless it says false, as Sveltos defaults it, and reports the other
// installOptions.
func (im *importer) createNamespace(d *migrate.Doc, field string, cm map[string]any, h *spec.HelmSource) {
	field += ".options.installOptions"
	want, ns := true, h.ReleaseNamespace
	if v, ok := migrate.Get(cm, "options", "installOptions", "createNamespace").(bool); ok {
		want = v
	}
	switch {
	case want && (ns == "" || spec.PresetNamespaces[ns]): // every cluster has it
	case want:
		h.CreateNamespace = true
		im.report.Add(d, field+".createNamespace", "carried over as helm.createNamespace: true (Sveltos' default): regatta creates namespace %s when it is missing, "+
			"and deletes it with the add-on only if regatta created it and nothing else is in it", ns)
	default:
		im.report.Add(d, field+".createNamespace", "false carried over: namespace %s must exist before the chart (deploy it in an earlier add-on or profile)", ns)
	}
	for k, v := range migrate.Map(cm, "options", "installOptions") {
		if k != "createNamespace" && v != false {
			im.report.Add(d, field+"."+k, "not carried over")
		}
	}
}

// values parses a values text; false (reported) for a Sveltos template or
// text that is not YAML.
func (im *importer) values(d *migrate.Doc, field, text string) (map[string]any, bool) {
	if text == "" {
		return nil, true
	}
	if line, n := templatedLines(text); n > 0 {
		im.report.Add(d, field, "a Sveltos template (%d templated %s, the first: %q) is not carried over: its data (.Cluster as the Cluster API object, templateResourceRefs) are not regatta's (.Cluster.Labels, .Cluster.Values)",
			n, plural(n, "line"), line)
		return nil, false
	}
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		im.report.Add(d, field, "not YAML, not carried over: %v", err)
		return nil, false
	}
	return m, true
}

// templatedLines counts the lines of text holding a template action and
// returns the first, trimmed.
func templatedLines(text string) (string, int) {
	first, n := "", 0
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "{{") {
			if n == 0 {
				first = strings.TrimSpace(l)
			}
			n++
		}
	}
	return first, n
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func (im *importer) valuesFrom(d *migrate.Doc, field string, ref map[string]any) (map[string]any, bool) {
	kind, name := migrate.Str(ref, "kind"), migrate.Str(ref, "name")
	src := im.find(kind, refNamespace(d, ref), name)
	if src == nil {
		if opt, _ := ref["optional"].(bool); !opt {
			im.report.Add(d, field, "%s %s was not given as a file: not carried over", kind, name)
			return nil, false
		}
		return nil, true
	}
	data, err := dataOf(src)
	if err != nil {
		im.report.Add(src, "data", "not carried over: %v", err)
		return nil, false
	}
	var out map[string]any
	ok := true
	for _, k := range sortedKeys(data) {
		m, valid := im.values(src, "data."+k, data[k])
		out, ok = migrate.Merge(out, m), ok && valid
	}
	return out, ok
}

// handledKustomizationRef are the kustomizationRefs fields the import maps.
var handledKustomizationRef = map[string]bool{"kind": true, "name": true, "namespace": true, "path": true, "targetNamespace": true}

// kustomizationRefs turns Flux-source kustomizationRefs into kustomize
// add-ons over their paths in --source.
func (im *importer) kustomizationRefs(d *migrate.Doc, s map[string]any, wait bool) []spec.Addon {
	var out []spec.Addon
	for i, r := range migrate.List(s, "kustomizationRefs") {
		rm := asMap(r)
		field := fmt.Sprintf("spec.kustomizationRefs[%d]", i)
		if !fluxSources[migrate.Str(rm, "kind")] {
			im.report.Add(d, field+".kind", "a kustomization from a %s is not carried over", migrate.Str(rm, "kind"))
			continue
		}
		p := im.sourcePath(d, field, migrate.Str(rm, "path"))
		if p == "" {
			continue
		}
		for k, v := range rm {
			if !handledKustomizationRef[k] && v != false {
				im.report.Add(d, field+"."+k, "not carried over")
			}
		}
		k := &spec.KustomizeSource{Path: p, TargetNamespace: migrate.Str(rm, "targetNamespace")}
		out = append(out, spec.Addon{Name: addonName("kustomize", path.Base(p), i), Kustomize: k, Wait: waitField(wait)})
	}
	return out
}

// isTemplate reports whether Sveltos renders a ConfigMap's or Secret's
// content as a template: the annotation is present, whatever its value
// (Sveltos' docs write "ok").
func isTemplate(d *migrate.Doc) (string, bool) {
	v, ok := migrate.Map(d.Obj, "metadata", "annotations")[templateAnnotation]
	if !ok {
		return "", false
	}
	return fmt.Sprint(v), true
}

// eventInstantiated reports whether Sveltos instantiates an EventTrigger's
// policy: marked projectsveltos.io/instantiate, or holding template
// actions (Sveltos' event examples template them without an annotation).
func eventInstantiated(d *migrate.Doc, data map[string]string) bool {
	if _, ok := migrate.Map(d.Obj, "metadata", "annotations")[instantiateAnnotation]; ok {
		return true
	}
	for _, v := range data {
		if strings.Contains(v, "{{") {
			return true
		}
	}
	return false
}
