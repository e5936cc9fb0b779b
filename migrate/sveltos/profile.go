package sveltos

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// handledProfile are the ClusterProfile spec fields the import maps.
var handledProfile = map[string]bool{
	"clusterSelector": true, "clusterRefs": true, "syncMode": true, "tier": true, "continueOnError": true,
	"stopMatchingBehavior": true, "dependsOn": true, "policyRefs": true, "helmCharts": true,
	"kustomizationRefs": true, "validateHealths": true, "driftExclusions": true, "patches": true,
}

// profile converts a ClusterProfile or Profile. Sveltos deploys policyRefs,
// then helmCharts, then kustomizationRefs, each without waiting for
// health unless validateHealths (or a chart's options.wait) asks to.
func (im *importer) profile(d *migrate.Doc) *spec.Profile {
	s := migrate.Map(d.Obj, "spec")
	p := &spec.Profile{
		TypeMeta: spec.TypeMeta{APIVersion: spec.APIVersion, Kind: spec.KindProfile},
		Metadata: spec.ObjectMeta{Name: im.uniqueName("profile", d.Name())},
	}
	if d.Kind() == kindProfile {
		im.report.Add(d, "metadata.namespace", "a Profile selects clusters of its namespace only; the imported profile selects across the fleet")
	}
	p.Spec.ClusterSelector = im.clusterSelector(d, s["clusterSelector"])
	for _, r := range migrate.List(s, "clusterRefs") {
		p.Spec.ClusterRefs = append(p.Spec.ClusterRefs, migrate.Str(asMap(r), "name"))
	}
	p.Spec.SyncMode = migrate.Str(s, "syncMode")
	p.Spec.StopMatchingBehavior = migrate.Str(s, "stopMatchingBehavior")
	p.Spec.ContinueOnError, _ = s["continueOnError"].(bool)
	if t, ok := s["tier"].(int); ok {
		p.Spec.Tier = &t
	}
	for _, dep := range migrate.List(s, "dependsOn") {
		if n, ok := dep.(string); ok {
			p.Spec.DependsOn = append(p.Spec.DependsOn, n)
		}
	}
	checks := im.healthChecks(d, s)
	p.Spec.HealthChecks = checks
	wait := len(checks) > 0
	p.Spec.Addons = append(p.Spec.Addons, im.policyRefs(d, s, wait, false)...)
	p.Spec.Addons = append(p.Spec.Addons, im.helmCharts(d, s, wait)...)
	p.Spec.Addons = append(p.Spec.Addons, im.kustomizationRefs(d, s, wait)...)
	p.Spec.DriftExclusions = driftExclusions(s)
	p.Spec.Overlays = im.patches(d, s, p)
	im.reportUnknown(d, s)
	if len(p.Spec.Addons) == 0 {
		im.report.Add(d, "spec", "nothing to deploy was carried over: profile %s not written", p.Metadata.Name)
	}
	return p
}

func (im *importer) reportUnknown(d *migrate.Doc, s map[string]any) {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case k == "templateResourceRefs":
			im.report.Add(d, "spec."+k, "not carried over: regatta's templates see the cluster's labels and values, not management-cluster resources (put what they provide into cluster.yaml values)")
		case !handledProfile[k]:
			im.report.Add(d, "spec."+k, "not carried over")
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// clusterSelector converts a cluster selector: a label selector, or the
// string form of v1alpha1 (env=prod,region in (eu,us)).
func (im *importer) clusterSelector(d *migrate.Doc, v any) spec.LabelSelector {
	text, ok := v.(string)
	if !ok {
		return selector(asMap(v))
	}
	reqs, err := labels.ParseToRequirements(text)
	if err != nil {
		im.report.Add(d, "spec.clusterSelector", "not carried over: %v", err)
		return spec.LabelSelector{}
	}
	var sel spec.LabelSelector
	for _, r := range reqs {
		op, ok := selectorOps[r.Operator()]
		if !ok {
			im.report.Add(d, "spec.clusterSelector", "operator %s of %s is not carried over", r.Operator(), r.Key())
			continue
		}
		req := spec.LabelSelectorRequirement{Key: r.Key(), Operator: op}
		if vals := r.Values().List(); len(vals) > 0 {
			req.Values = vals
		}
		sel.MatchExpressions = append(sel.MatchExpressions, req)
	}
	return sel
}

var selectorOps = map[selection.Operator]string{
	selection.Equals: "In", selection.DoubleEquals: "In", selection.In: "In",
	selection.NotEquals: "NotIn", selection.NotIn: "NotIn",
	selection.Exists: "Exists", selection.DoesNotExist: "DoesNotExist",
}

// selector converts a Sveltos cluster selector (a label selector).
func selector(m map[string]any) spec.LabelSelector {
	var sel spec.LabelSelector
	for k, v := range migrate.Map(m, "matchLabels") {
		if sel.MatchLabels == nil {
			sel.MatchLabels = map[string]string{}
		}
		sel.MatchLabels[k] = fmt.Sprint(v)
	}
	for _, e := range migrate.List(m, "matchExpressions") {
		em := asMap(e)
		req := spec.LabelSelectorRequirement{Key: migrate.Str(em, "key"), Operator: migrate.Str(em, "operator")}
		for _, v := range migrate.List(em, "values") {
			req.Values = append(req.Values, fmt.Sprint(v))
		}
		sel.MatchExpressions = append(sel.MatchExpressions, req)
	}
	return sel
}

func waitField(wait bool) *bool {
	if wait {
		return nil
	}
	return &wait
}

// healthChecks wraps validateHealths scripts (evaluate() returning
// hs.healthy) as regatta health checks (hs.status).
func (im *importer) healthChecks(d *migrate.Doc, s map[string]any) []spec.HealthCheck {
	var out []spec.HealthCheck
	seen := map[string]bool{}
	for i, v := range migrate.List(s, "validateHealths") {
		vm := asMap(v)
		field := fmt.Sprintf("spec.validateHealths[%d]", i)
		gk := migrate.Str(vm, "group") + "/" + migrate.Str(vm, "kind")
		script := migrate.Str(vm, "script")
		switch {
		case script == "":
			im.report.Add(d, field, "a health validation without a Lua script is not carried over (regatta waits for kstatus health)")
			continue
		case seen[gk]:
			im.report.Add(d, field, "a second health validation of %s is not carried over: regatta has one health check per kind", gk)
			continue
		}
		seen[gk] = true
		for _, k := range []string{"namespace", "labelFilters"} {
			if migrate.Get(vm, k) != nil {
				im.report.Add(d, field+"."+k, "not carried over: the health check applies to every %s of the profile", gk)
			}
		}
		out = append(out, spec.HealthCheck{Group: migrate.Str(vm, "group"), Kind: migrate.Str(vm, "kind"), Script: wrapHealth(script)})
	}
	return out
}

// wrapHealth adapts a Sveltos health script to regatta's convention.
func wrapHealth(script string) string {
	return script + `
-- Added by regatta import: Sveltos' evaluate() result as a health status.
local result = evaluate()
local status = "Progressing"
if result ~= nil and result.healthy then status = "Healthy" end
local message = ""
if result ~= nil and result.message ~= nil then message = result.message end
return {status = status, message = message}
`
}

func driftExclusions(s map[string]any) []spec.DriftExclusion {
	var out []spec.DriftExclusion
	for _, e := range migrate.List(s, "driftExclusions") {
		em := asMap(e)
		de := spec.DriftExclusion{Target: migrate.PatchSelector(migrate.Map(em, "target"))}
		for _, p := range migrate.List(em, "paths") {
			de.Paths = append(de.Paths, fmt.Sprint(p))
		}
		out = append(out, de)
	}
	return out
}

// patches apply to everything the profile deploys: an overlay per add-on
// for the clusters the profile selects.
func (im *importer) patches(d *migrate.Doc, s map[string]any, p *spec.Profile) []spec.Overlay {
	var patches []spec.Patch
	for _, pt := range migrate.List(s, "patches") {
		pm := asMap(pt)
		patches = append(patches, spec.Patch{Patch: migrate.Str(pm, "patch"), Target: migrate.PatchSelector(migrate.Map(pm, "target"))})
	}
	if len(patches) == 0 {
		return nil
	}
	if p.Spec.ClusterSelector.IsEmpty() {
		im.report.Add(d, "spec.patches", "not carried over: overlays need a cluster selector and the profile has only clusterRefs")
		return nil
	}
	var out []spec.Overlay
	for _, a := range p.Spec.Addons {
		out = append(out, spec.Overlay{Name: a.Name + "-patches", ClusterSelector: p.Spec.ClusterSelector, Addon: a.Name, Patches: patches})
	}
	return out
}
