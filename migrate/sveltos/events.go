package sveltos

import (
	"regexp"
	"sort"
	"strings"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// Sveltos' event kinds (lib.projectsveltos.io).
const (
	kindEventSource  = "EventSource"
	kindEventTrigger = "EventTrigger"
	groupLib         = "lib.projectsveltos.io"
)

// eventSource converts a Sveltos EventSource into events/<name>.yaml:
// its resource selectors and aggregatedSelection are regatta's fields; a
// spec-level evaluate (older Sveltos releases) goes to each selector.
func (im *importer) eventSource(d *migrate.Doc) *spec.EventSource {
	s := migrate.Map(d.Obj, "spec")
	e := &spec.EventSource{
		TypeMeta: spec.TypeMeta{APIVersion: spec.APIVersion, Kind: spec.KindEventSource},
		Metadata: spec.ObjectMeta{Name: d.Name()},
	}
	e.Spec.ResourceSelectors = im.resourceSelectors(d, "spec.resourceSelectors", migrate.List(s, "resourceSelectors"))
	e.Spec.AggregatedSelection = migrate.Str(s, "aggregatedSelection")
	if ev := migrate.Str(s, "evaluate"); ev != "" {
		for i := range e.Spec.ResourceSelectors {
			if e.Spec.ResourceSelectors[i].Evaluate == "" {
				e.Spec.ResourceSelectors[i].Evaluate = ev
			}
		}
	}
	for _, k := range sortedMapKeys(s) {
		switch k {
		case "resourceSelectors", "aggregatedSelection", "evaluate":
		case "collectResources":
			// regatta's event templates always see the resources.
		default:
			im.report.Add(d, "spec."+k, "not carried over")
		}
	}
	return e
}

// handledEventTrigger are the EventTrigger spec fields the import maps.
var handledEventTrigger = map[string]bool{
	"eventSourceName": true, "oneForEvent": true, "sourceClusterSelector": true, "destinationClusterSelector": true,
	"syncMode": true, "stopMatchingBehavior": true, "tier": true, "continueOnError": true,
	"policyRefs": true, "helmCharts": true, "kustomizationRefs": true,
}

// eventProfile converts an EventTrigger into an event profile: its
// eventTrigger names the event source, watched and destination clusters
// and oneForEvent; its policyRefs, helmCharts and kustomizationRefs are
// the add-ons, as a ClusterProfile's. A templated policy is rewritten to
// regatta's event data (eventTemplate) and its add-on gets template: true.
func (im *importer) eventProfile(d *migrate.Doc) *spec.Profile {
	s := migrate.Map(d.Obj, "spec")
	p := &spec.Profile{
		TypeMeta: spec.TypeMeta{APIVersion: spec.APIVersion, Kind: spec.KindProfile},
		Metadata: spec.ObjectMeta{Name: im.uniqueName("profile", d.Name())},
	}
	t := &spec.EventTrigger{EventSourceName: migrate.Str(s, "eventSourceName")}
	t.OneForEvent, _ = s["oneForEvent"].(bool)
	if v, ok := s["sourceClusterSelector"]; ok {
		sel := im.clusterSelector(d, v)
		t.SourceClusterSelector = &sel
	}
	if v, ok := s["destinationClusterSelector"]; ok {
		sel := im.clusterSelector(d, v)
		t.DestinationClusterSelector = &sel
	}
	p.Spec.EventTrigger = t
	p.Spec.SyncMode = migrate.Str(s, "syncMode")
	p.Spec.StopMatchingBehavior = migrate.Str(s, "stopMatchingBehavior")
	p.Spec.ContinueOnError, _ = s["continueOnError"].(bool)
	if tier, ok := s["tier"].(int); ok {
		p.Spec.Tier = &tier
	}
	p.Spec.Addons = append(p.Spec.Addons, im.policyRefs(d, s, false, true)...)
	p.Spec.Addons = append(p.Spec.Addons, im.helmCharts(d, s, false)...)
	p.Spec.Addons = append(p.Spec.Addons, im.kustomizationRefs(d, s, false)...)
	for _, k := range sortedMapKeys(s) {
		switch {
		case k == "templateResourceRefs" || k == "configMapGenerator" || k == "secretGenerator":
			im.report.Add(d, "spec."+k, "not carried over: regatta's event templates see the event's resources (.Event.Resource, .Event.Resources) and the cluster's labels and values, not management-cluster resources")
		case k == "destinationCluster":
			im.report.Add(d, "spec."+k, "not carried over: select the destination with destinationClusterSelector (the cluster's labels)")
		case !handledEventTrigger[k]:
			im.report.Add(d, "spec."+k, "not carried over")
		}
	}
	if len(p.Spec.Addons) == 0 {
		im.report.Add(d, "spec", "nothing to deploy was carried over: profile %s not written", p.Metadata.Name)
	}
	return p
}

// eventData maps Sveltos' event template data to regatta's: the matching
// resource (one for event) or resources (one for all), and the Cluster
// API object's name and labels.
var eventData = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(^|[^\w.\])$])(\$?)\.Resources\b`), "$1$2.Event.Resources"},
	{regexp.MustCompile(`(^|[^\w.\])$])(\$?)\.Resource\b`), "$1$2.Event.Resource"},
	{regexp.MustCompile(`(^|[^\w.\])$])(\$?)\.Cluster\.metadata\.name\b`), "$1$2.Cluster.Name"},
	{regexp.MustCompile(`(^|[^\w.\])$])(\$?)\.Cluster\.metadata\.labels\b`), "$1$2.Cluster.Labels"},
}

// sveltosOnly are template data regatta has no equivalent of.
var sveltosOnly = regexp.MustCompile(`\.Cluster\.(metadata|spec|status)\b|\.MatchingResources\b|getResource\b`)

// eventTemplate rewrites a Sveltos event template to regatta's data
// (.Resource → .Event.Resource, .Resources → .Event.Resources,
// .Cluster.metadata.name → .Cluster.Name, .Cluster.metadata.labels →
// .Cluster.Labels) and reports what it did and what has no equivalent.
func (im *importer) eventTemplate(src *migrate.Doc, field, text string) string {
	out := text
	for _, m := range eventData {
		out = m.re.ReplaceAllString(out, m.with)
	}
	if out != text {
		im.report.Add(src, field, "a Sveltos event template, carried over as a regatta template (template: true) with Sveltos' data renamed: "+
			".Resource → .Event.Resource, .Resources → .Event.Resources, .Cluster.metadata.name → .Cluster.Name, .Cluster.metadata.labels → .Cluster.Labels; "+
			"check it with `regatta render --event-resource`")
	}
	if rest := sveltosOnly.FindAllString(out, -1); len(rest) > 0 {
		im.report.Add(src, field, "the template reads %s, which regatta's templates do not have (only .Event, .Cluster.Name, .Cluster.Labels, .Cluster.Values): rewrite it",
			strings.Join(uniqueStrings(rest), ", "))
	}
	return out
}

func uniqueStrings(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
