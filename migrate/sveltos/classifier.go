package sveltos

import (
	"fmt"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// classifier converts a Classifier: its label list becomes a map, the
// constraints and Lua scripts keep their form.
func (im *importer) classifier(d *migrate.Doc) *spec.Classifier {
	s := migrate.Map(d.Obj, "spec")
	c := &spec.Classifier{
		TypeMeta: spec.TypeMeta{APIVersion: spec.APIVersion, Kind: spec.KindClassifier},
		Metadata: spec.ObjectMeta{Name: im.uniqueName("classifier", d.Name())},
	}
	c.Spec.ClassifierLabels = map[string]string{}
	for _, l := range migrate.List(s, "classifierLabels") {
		lm := asMap(l)
		c.Spec.ClassifierLabels[migrate.Str(lm, "key")] = migrate.Str(lm, "value")
	}
	for _, v := range migrate.List(s, "kubernetesVersionConstraints") {
		vm := asMap(v)
		c.Spec.KubernetesVersionConstraints = append(c.Spec.KubernetesVersionConstraints,
			spec.VersionConstraint{Comparison: migrate.Str(vm, "comparison"), Version: migrate.Str(vm, "version")})
	}
	if drc := migrate.Map(s, "deployedResourceConstraint"); drc != nil {
		c.Spec.DeployedResourceConstraint = im.resourceConstraint(d, drc)
	}
	for k := range s {
		if k != "classifierLabels" && k != "kubernetesVersionConstraints" && k != "deployedResourceConstraint" {
			im.report.Add(d, "spec."+k, "not carried over")
		}
	}
	return c
}

func (im *importer) resourceConstraint(d *migrate.Doc, drc map[string]any) *spec.DeployedResourceConstraint {
	out := &spec.DeployedResourceConstraint{AggregatedClassification: migrate.Str(drc, "aggregatedClassification")}
	out.ResourceSelectors = im.resourceSelectors(d, "spec.deployedResourceConstraint.resourceSelectors", migrate.List(drc, "resourceSelectors"))
	return out
}

// resourceSelectors converts Sveltos resource selectors (a Classifier's,
// an EventSource's): the same fields in regatta; name and
// namespaceSelector are reported.
func (im *importer) resourceSelectors(d *migrate.Doc, field string, list []any) []spec.ResourceSelector {
	var out []spec.ResourceSelector
	for i, r := range list {
		rm := asMap(r)
		sel := spec.ResourceSelector{
			Group:     migrate.Str(rm, "group"),
			Version:   migrate.Str(rm, "version"),
			Kind:      migrate.Str(rm, "kind"),
			Namespace: migrate.Str(rm, "namespace"),
			Evaluate:  migrate.Str(rm, "evaluate"),
		}
		for _, f := range migrate.List(rm, "labelFilters") {
			fm := asMap(f)
			sel.LabelFilters = append(sel.LabelFilters, spec.LabelFilter{
				Key: migrate.Str(fm, "key"), Operation: migrate.Str(fm, "operation"), Value: migrate.Str(fm, "value"),
			})
		}
		for _, k := range []string{"name", "namespaceSelector"} {
			if rm[k] != nil {
				im.report.Add(d, fmt.Sprintf("%s[%d].%s", field, i, k), "not carried over")
			}
		}
		out = append(out, sel)
	}
	return out
}
