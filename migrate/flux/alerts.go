package flux

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// groupNotification is the API group of Flux's Alert and Provider.
const groupNotification = "notification.toolkit.fluxcd.io"

// errorHappenings are what an Alert of eventSeverity error sends on:
// Flux's error events are failed applies, health checks past their
// timeout and revisions that do not build.
var errorHappenings = []string{spec.AlertOnFailed, spec.AlertOnConflict, spec.AlertOnProgressing, spec.AlertOnRevisionRefused}

// alertGroup is one Flux Alert, converted the same way for its clusters.
type alertGroup struct {
	alert    object
	spec     spec.AlertSpec
	clusters []string
}

// alerts converts each cluster's Flux Alerts, with the Provider each
// names, into alerts/<name>.yaml. An Alert that converts the same on
// several clusters is one alert selecting them all. Providers no Alert
// uses are reported.
func (im *importer) alerts(scans []*scan, g *grouper) []*spec.Alert {
	var groups []*alertGroup
	index := map[string]*alertGroup{}
	perKey := map[string]int{}
	for _, s := range scans {
		used := map[string]bool{}
		for _, o := range notificationObjects(s, "Alert") {
			as, ok := im.alertSpec(s, o, g)
			used[refKey("Provider", o.namespace(), migrate.Str(o.obj, "spec", "providerRef", "name"))] = true
			if !ok {
				continue
			}
			js, _ := json.Marshal(as)
			k := o.key() + "\x00" + string(js)
			gr := index[k]
			if gr == nil {
				gr = &alertGroup{alert: o, spec: as}
				index[k] = gr
				groups = append(groups, gr)
				perKey[o.key()]++
			}
			gr.clusters = append(gr.clusters, s.cluster)
		}
		for _, p := range notificationObjects(s, "Provider") {
			if !used[p.key()] {
				im.report.Add(p.doc, "", "Provider %s: no Alert uses it: not carried over", p.name())
			}
		}
	}
	return im.writeAlerts(groups, perKey)
}

// writeAlerts names the alerts: the Flux Alert's name, with its first
// cluster's name when it converts differently on several clusters.
func (im *importer) writeAlerts(groups []*alertGroup, perKey map[string]int) []*spec.Alert {
	var out []*spec.Alert
	used := map[string]bool{}
	for _, gr := range groups {
		base := profileName(gr.alert.name())
		if perKey[gr.alert.key()] > 1 {
			base = profileName(base + "-" + gr.clusters[0])
		}
		name := base
		for i := 2; used[name]; i++ {
			name = profileName(fmt.Sprintf("%s-%d", base, i))
		}
		used[name] = true
		a := &spec.Alert{
			TypeMeta: spec.TypeMeta{APIVersion: spec.APIVersion, Kind: spec.KindAlert},
			Metadata: spec.ObjectMeta{Name: name},
			Spec:     gr.spec,
		}
		a.Spec.ClusterSelector = clusterSelector(gr.clusters)
		im.report.Add(gr.alert.doc, "", "Alert %s/%s: carried over as %s/%s.yaml", gr.alert.namespace(), gr.alert.name(), spec.AlertsDir, name)
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metadata.Name < out[j].Metadata.Name })
	return out
}

// notificationObjects lists a cluster's Flux objects of a notification
// kind, by key.
func notificationObjects(s *scan, kind string) []object {
	var out []object
	for _, o := range s.objects {
		if o.kind() == kind && o.group() == groupNotification {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// alertSpec converts one Flux Alert of a cluster: its Provider as the
// destination, its severity as the happenings, its event sources as the
// profiles the import made of them. It is false, reported, when no
// destination or no profile is left.
func (im *importer) alertSpec(s *scan, a object, g *grouper) (spec.AlertSpec, bool) {
	var as spec.AlertSpec
	sm := migrate.Map(a.obj, "spec")
	pname := migrate.Str(sm, "providerRef", "name")
	p, ok := s.objects[refKey("Provider", a.namespace(), pname)]
	if !ok {
		im.report.Add(a.doc, "spec.providerRef", "Provider %s/%s is not in this repository: alert not written", a.namespace(), pname)
		return as, false
	}
	n, suspended, ok := im.provider(p)
	if !ok {
		im.report.Add(a.doc, "spec.providerRef", "Provider %s has no regatta destination: alert %s not written", pname, a.name())
		return as, false
	}
	as.Notifications = []spec.Notification{n}
	as.On = im.severity(a)
	as.Profiles, ok = im.eventSources(s, a, g)
	if !ok {
		return as, false
	}
	as.Suspend, _ = sm["suspend"].(bool)
	as.Suspend = as.Suspend || suspended
	im.reportAlertFields(a)
	return as, true
}

// severity maps eventSeverity: error to the trouble happenings, info
// (Flux's default) to every happening.
func (im *importer) severity(a object) []string {
	switch sev := migrate.Str(a.obj, "spec", "eventSeverity"); sev {
	case "error":
		return slices.Clone(errorHappenings)
	case "", "info":
		im.report.Add(a.doc, "spec.eventSeverity", "info (Flux's default) sends every event: the alert sends on every happening, news included (RolloutDone, DriftCorrected, EventInstance); "+
			"narrow spec.on to the trouble (%v) if that is too much", errorHappenings)
	default:
		im.report.Add(a.doc, "spec.eventSeverity", "%q is not a Flux severity (info, error): the alert sends on every happening", sev)
	}
	return slices.Clone(spec.AlertHappenings)
}

// reportAlertFields reports the Alert's fields that have no equivalent.
func (im *importer) reportAlertFields(a object) {
	for _, k := range sortedKeys(migrate.Map(a.obj, "spec")) {
		switch k {
		case "providerRef", "eventSeverity", "eventSources", "suspend":
		case "summary", "eventMetadata":
			im.report.Add(a.doc, "spec."+k, "not carried over: regatta's messages name the profile, the revision, the clusters and the first errors themselves")
		case "inclusionList", "exclusionList":
			im.report.Add(a.doc, "spec."+k, "not carried over: regatta's alerts choose by happening (spec.on), not by a pattern over the message")
		default:
			im.report.Add(a.doc, "spec."+k, "not carried over")
		}
	}
}

// eventSources maps an Alert's event sources of kind Kustomization and
// HelmRelease (a name, or * with matchLabels) to the profiles the import
// made of them on this cluster; other kinds are reported.
func (im *importer) eventSources(s *scan, a object, g *grouper) ([]string, bool) {
	found := map[string]bool{}
	for i, es := range migrate.List(a.obj, "spec", "eventSources") {
		em, _ := es.(map[string]any)
		kind, name, ns := migrate.Str(em, "kind"), migrate.Str(em, "name"), migrate.Str(em, "namespace")
		if ns == "" {
			ns = a.namespace()
		}
		field := fmt.Sprintf("spec.eventSources[%d]", i)
		if kind != "Kustomization" && kind != "HelmRelease" {
			im.report.Add(a.doc, field, "events of %s objects are not carried over: regatta's alerts watch profiles (made of Kustomizations and HelmReleases) and the revisions regatta takes (RevisionRefused)", kind)
			continue
		}
		n := 0
		for _, o := range sourcesOf(s, kind, ns, name, migrate.Map(em, "matchLabels")) {
			if p := g.profileOf(s.cluster, o); p != "" {
				found[p] = true
				n++
			}
		}
		switch {
		case n > 0:
		case kind == "Kustomization" && name == selfSource:
			im.report.Add(a.doc, field, "Kustomization %s is Flux's own sync, which regatta replaces: not watched (a revision regatta cannot take is RevisionRefused)", selfSource)
		default:
			im.report.Add(a.doc, field, "no profile was made of %s %s/%s: not watched", kind, ns, name)
		}
	}
	if len(found) == 0 {
		im.report.Add(a.doc, "spec.eventSources", "none of its event sources became a profile: alert %s not written", a.name())
		return nil, false
	}
	out := make([]string, 0, len(found))
	for p := range found {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, true
}

// sourcesOf lists the cluster's objects an event source selects: its
// kind in its namespace (an object the build left without one counts),
// by name or *, with all of matchLabels.
func sourcesOf(s *scan, kind, ns, name string, matchLabels map[string]any) []object {
	var out []object
	for _, o := range s.objects {
		if o.kind() != kind || (o.namespace() != ns && o.namespace() != "") || (name != "*" && name != o.name()) {
			continue
		}
		labels := migrate.Map(o.obj, "metadata", "labels")
		match := true
		for k, v := range matchLabels {
			match = match && fmt.Sprint(labels[k]) == fmt.Sprint(v) && labels[k] != nil
		}
		if match {
			out = append(out, o)
		}
	}
	return out
}

// profileOf names the profile the import made, on a cluster, of a
// Kustomization (its own) or a HelmRelease (its Kustomization's, where it
// is a helm add-on); "" when there is none.
func (g *grouper) profileOf(cluster string, o object) string {
	cu := g.clusterUnits(cluster)
	if cu == nil {
		return ""
	}
	key := o.key()
	if o.kind() == "HelmRelease" {
		key = ""
		for _, k := range cu.order {
			for _, h := range cu.units[k].helm {
				if h.key == o.key() {
					key = k
				}
			}
		}
	}
	gr := g.groupOf(cluster, key)
	if gr == nil || gr.empty {
		return ""
	}
	return gr.name
}
