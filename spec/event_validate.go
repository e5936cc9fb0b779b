package spec

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// validateEventSource checks an EventSource: its name, selectors and
// scripts.
func validateEventSource(e *EventSource, rep report) {
	checkName(rep, e.Metadata.Name, fileStem(e.Source.File), "file")
	checkLabels(rep, "metadata.labels", e.Metadata.Labels)
	s := &e.Spec
	if len(s.ResourceSelectors) == 0 {
		rep.errorf("spec.resourceSelectors", "at least one resource selector is required")
	}
	for i, rs := range s.ResourceSelectors {
		checkResourceSelector(rep, fmt.Sprintf("spec.resourceSelectors[%d]", i), rs)
	}
	checkLua(rep, "spec.aggregatedSelection", s.AggregatedSelection)
}

func checkResourceSelector(rep report, f string, rs ResourceSelector) {
	if rs.Version == "" {
		rep.errorf(f+".version", "required (v1 for core kinds)")
	}
	if rs.Kind == "" {
		rep.errorf(f+".kind", "required")
	}
	if rs.Namespace != "" {
		checkDNS(rep, f+".namespace", rs.Namespace, validation.IsDNS1123Label)
	}
	for j, lf := range rs.LabelFilters {
		lff := fmt.Sprintf("%s.labelFilters[%d]", f, j)
		checkEnum(rep, lff+".operation", lf.Operation, LabelFilterEqual, LabelFilterDifferent)
		for _, msg := range validation.IsQualifiedName(lf.Key) {
			rep.errorf(lff+".key", "%q: %s", lf.Key, msg)
		}
		for _, msg := range validation.IsValidLabelValue(lf.Value) {
			rep.errorf(lff+".value", "%q: %s", lf.Value, msg)
		}
	}
	checkLua(rep, f+".evaluate", rs.Evaluate)
}

// checkEventTrigger validates a profile's eventTrigger and compiles its
// cluster selectors: destinationClusterSelector, else
// sourceClusterSelector, decides which clusters the profile selects
// (Matches); the source selector decides which clusters are watched.
func checkEventTrigger(r *Repository, p *Profile, rep report) {
	t := p.Spec.EventTrigger
	if t == nil {
		return
	}
	const f = "spec.eventTrigger"
	switch {
	case t.EventSourceName == "":
		rep.errorf(f+".eventSourceName", "required: the name of an EventSource in %s/", EventsDir)
	case r.EventSource(t.EventSourceName) == nil && !r.failedToLoad(KindEventSource, t.EventSourceName):
		rep.errorf(f+".eventSourceName", "event source %q does not exist (%s/%s.yaml)", t.EventSourceName, EventsDir, t.EventSourceName)
	}
	if t.MaxInstances < 0 {
		rep.errorf(f+".maxInstances", "must be 0 (default %d) or more, got %d", DefaultMaxInstances, t.MaxInstances)
	}
	if t.SourceClusterSelector != nil && (!p.Spec.ClusterSelector.IsEmpty() || len(p.Spec.ClusterRefs) > 0) {
		rep.errorf(f+".sourceClusterSelector", "replaces spec.clusterSelector and spec.clusterRefs: set one or the other")
	}
	if t.DestinationClusterSelector != nil && len(p.Spec.ClusterRefs) > 0 {
		rep.errorf(f+".destinationClusterSelector", "cannot be combined with spec.clusterRefs: select the watched clusters with spec.clusterSelector or sourceClusterSelector")
	}
	t.source = compileEventSelector(rep, f+".sourceClusterSelector", t.SourceClusterSelector)
	dest := compileEventSelector(rep, f+".destinationClusterSelector", t.DestinationClusterSelector)
	switch {
	case dest != nil:
		p.selector = dest
	case t.source != nil:
		p.selector = t.source
	}
	checkEventTemplates(p, rep)
}

func compileEventSelector(rep report, field string, s *LabelSelector) labels.Selector {
	if s == nil {
		return nil
	}
	checkSelector(rep, field, *s)
	if s.IsEmpty() {
		rep.errorf(field, "empty: it would select no cluster (leave it out for the default)")
	}
	sel, err := s.Compile()
	if err != nil {
		return nil
	}
	return sel
}

// checkEventTemplates warns about a one-for-event profile whose add-ons
// are not templates: every instance would render the same objects, and
// the second instance would collide with the first.
func checkEventTemplates(p *Profile, rep report) {
	if !p.Spec.EventTrigger.OneForEvent {
		return
	}
	for _, a := range p.Spec.Addons {
		if a.Template || a.Helm != nil {
			return
		}
	}
	rep.warnf("spec.addons", "no add-on sets template: true: every instance renders the same objects, so a second event collides with the first (name objects with {{ .Event.Name }})")
}
