package sveltos

import (
	"fmt"
	"slices"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// Sveltos' health check kinds (lib.projectsveltos.io).
const (
	kindClusterHealthCheck = "ClusterHealthCheck"
	kindHealthCheck        = "HealthCheck"
)

// addonsHappenings are what a liveness check of type Addons watches: the
// add-ons' deployment state on each cluster.
var addonsHappenings = []string{spec.AlertOnFailed, spec.AlertOnConflict, spec.AlertOnProgressing}

// notifyTypes maps Sveltos' notification types to regatta's.
var notifyTypes = map[string]string{
	"KubernetesEvent": spec.NotifyEvent,
	"Slack":           spec.NotifySlack,
	"Webex":           spec.NotifyWebex,
	"Discord":         spec.NotifyDiscord,
	"Teams":           spec.NotifyTeams,
	"Telegram":        spec.NotifyTelegram,
	"SMTP":            spec.NotifySMTP,
}

// secretKeys says, per Sveltos notification type, how its Secret's keys
// (libsveltos api/v1beta1/clusterhealthcheck_type.go) become the keys
// regatta reads (docs/operations.md "Destinations").
var secretKeys = map[string]string{
	"Slack":    "SLACK_TOKEN → token, SLACK_CHANNEL_ID → channel",
	"Webex":    "WEBEX_TOKEN → token, WEBEX_ROOM_ID → channel",
	"Teams":    "TEAMS_WEBHOOK_URL → address (a Teams workflow webhook: \"Post to a channel when a webhook request is received\")",
	"Telegram": "TELEGRAM_TOKEN → token, TELEGRAM_CHAT_ID → channel",
	"Discord": "address: the URL of a webhook of the channel (Channel settings → Integrations → Webhooks); " +
		"regatta posts to a channel webhook, so DISCORD_TOKEN and DISCORD_CHANNEL_ID (a bot) are not used",
	"SMTP": "SMTP_HOST → host, SMTP_PORT → port, SMTP_SENDER → from and username, SMTP_PASSWORD → password, " +
		"SMTP_RECIPIENTS → to (comma-separated); SMTP_CC and SMTP_BCC have no equivalent: add those addresses to to; " +
		"tls is mandatory unless the key tls says opportunistic or none",
}

// healthCheck reports a HealthCheck: it is carried over inside the
// alert of each ClusterHealthCheck that names it (Import indexed it), as
// regatta runs a health check within an alert.
func (im *importer) healthCheck(d *migrate.Doc) {
	im.report.Add(d, "", "HealthCheck %s: carried over into the spec.healthChecks of the alert of each ClusterHealthCheck that references it "+
		"(none is written for it alone)", d.Name())
}

// alert converts a ClusterHealthCheck into alerts/<name>.yaml: its
// clusterSelector, its Addons liveness checks as the add-ons' happenings
// and its notifications as destinations. It returns nil, reported, when
// no liveness check or no notification is left.
func (im *importer) alert(d *migrate.Doc) *spec.Alert {
	s := migrate.Map(d.Obj, "spec")
	a := &spec.Alert{
		TypeMeta: spec.TypeMeta{APIVersion: spec.APIVersion, Kind: spec.KindAlert},
		Metadata: spec.ObjectMeta{Name: im.uniqueName("alert", d.Name())},
	}
	if v, ok := s["clusterSelector"]; ok {
		a.Spec.ClusterSelector = im.clusterSelector(d, v)
	}
	if len(a.Spec.ClusterSelector.MatchLabels) == 0 && len(a.Spec.ClusterSelector.MatchExpressions) == 0 {
		im.report.Add(d, "spec.clusterSelector", "empty: the alert watches every cluster (an alert's empty selector selects all, unlike a profile's)")
	}
	a.Spec.On, a.Spec.HealthChecks = im.livenessChecks(d, migrate.List(s, "livenessChecks"))
	for _, k := range sortedMapKeys(s) {
		if k != "clusterSelector" && k != "livenessChecks" && k != "notifications" {
			im.report.Add(d, "spec."+k, "not carried over")
		}
	}
	if len(a.Spec.On) == 0 {
		im.report.Add(d, "spec.livenessChecks", "no liveness check was carried over: alert %s not written", a.Metadata.Name)
		return nil
	}
	for i, n := range migrate.List(s, "notifications") {
		nm, _ := n.(map[string]any)
		if rn, ok := im.notification(d, fmt.Sprintf("spec.notifications[%d]", i), nm); ok {
			a.Spec.Notifications = append(a.Spec.Notifications, rn)
		}
	}
	if len(a.Spec.Notifications) == 0 {
		im.report.Add(d, "spec.notifications", "no notification was carried over: alert %s not written", a.Metadata.Name)
		return nil
	}
	im.report.Add(d, "", "ClusterHealthCheck %s: carried over as %s/%s.yaml", d.Name(), spec.AlertsDir, a.Metadata.Name)
	return a
}

// livenessChecks turns Addons checks into the add-ons' happenings, and
// HealthCheck checks (Lua over any kind) into the alert's healthChecks
// and HealthCheckDegraded.
func (im *importer) livenessChecks(d *migrate.Doc, checks []any) ([]string, []spec.AlertHealthCheck) {
	var on []string
	var hcs []spec.AlertHealthCheck
	for i, c := range checks {
		cm, _ := c.(map[string]any)
		field := fmt.Sprintf("spec.livenessChecks[%d]", i)
		switch t := migrate.Str(cm, "type"); t {
		case "Addons":
			if !slices.Contains(on, spec.AlertOnFailed) {
				on = append(on, addonsHappenings...)
			}
		case "HealthCheck":
			if hc, ok := im.luaHealthCheck(d, field, cm); ok {
				hcs = append(hcs, hc)
				if !slices.Contains(on, spec.AlertOnHealthCheckDegraded) {
					on = append(on, spec.AlertOnHealthCheckDegraded)
				}
			}
		default:
			im.report.Add(d, field+".type", "liveness check type %q: not carried over", t)
		}
	}
	return on, hcs
}

// luaHealthCheck converts the HealthCheck a liveness check references:
// its resourceSelectors (labelFilters as a label selector) and its
// evaluateHealth script, which regatta runs as Sveltos does (global
// resources, evaluate() returning hs.resources).
func (im *importer) luaHealthCheck(d *migrate.Doc, field string, check map[string]any) (spec.AlertHealthCheck, bool) {
	name := migrate.Str(check, "livenessSourceRef", "name")
	hd := im.data[kindHealthCheck+"//"+name]
	if hd == nil {
		im.report.Add(d, field+".livenessSourceRef", "HealthCheck %s is not among the imported files: liveness check %s not carried over", name, migrate.Str(check, "name"))
		return spec.AlertHealthCheck{}, false
	}
	hs := migrate.Map(hd.Obj, "spec")
	out := spec.AlertHealthCheck{Name: migrate.Str(check, "name"), Script: migrate.Str(hs, "evaluateHealth")}
	if out.Name == "" {
		out.Name = name
	}
	for j, rs := range migrate.List(hs, "resourceSelectors") {
		out.ResourceSelectors = append(out.ResourceSelectors, im.healthSelector(hd, fmt.Sprintf("spec.resourceSelectors[%d]", j), asMap(rs)))
	}
	for _, k := range sortedMapKeys(hs) {
		if k != "resourceSelectors" && k != "evaluateHealth" {
			im.report.Add(hd, "spec."+k, "not carried over")
		}
	}
	im.report.Add(d, field, "liveness check %s: carried over as the alert's health check %s (HealthCheck %s)", migrate.Str(check, "name"), out.Name, name)
	return out, true
}

// healthSelector converts one resource selector: Equal label filters
// become matchLabels, Different ones NotIn (which, as Different, also
// matches objects without the label).
func (im *importer) healthSelector(d *migrate.Doc, field string, rs map[string]any) spec.HealthResourceSelector {
	out := spec.HealthResourceSelector{Group: migrate.Str(rs, "group"), Version: migrate.Str(rs, "version"),
		Kind: migrate.Str(rs, "kind"), Namespace: migrate.Str(rs, "namespace")}
	for j, f := range migrate.List(rs, "labelFilters") {
		fm := asMap(f)
		key, value := migrate.Str(fm, "key"), migrate.Str(fm, "value")
		switch op := migrate.Str(fm, "operation"); op {
		case spec.LabelFilterEqual:
			if out.LabelSelector.MatchLabels == nil {
				out.LabelSelector.MatchLabels = map[string]string{}
			}
			out.LabelSelector.MatchLabels[key] = value
		case spec.LabelFilterDifferent:
			out.LabelSelector.MatchExpressions = append(out.LabelSelector.MatchExpressions,
				spec.LabelSelectorRequirement{Key: key, Operator: "NotIn", Values: []string{value}})
		default:
			im.report.Add(d, fmt.Sprintf("%s.labelFilters[%d].operation", field, j), "%q: not carried over", op)
		}
	}
	for _, k := range sortedMapKeys(rs) {
		switch k {
		case "group", "version", "kind", "namespace", "labelFilters":
		case "evaluate":
			im.report.Add(d, field+".evaluate", "not carried over: the check's script sees every object the selector lists (filter them in evaluateHealth)")
		default:
			im.report.Add(d, field+"."+k, "not carried over")
		}
	}
	return out
}

// notification converts one notification; its Secret keeps its name,
// and the report says where it must live and which keys to rename.
func (im *importer) notification(d *migrate.Doc, field string, n map[string]any) (spec.Notification, bool) {
	st := migrate.Str(n, "type")
	out := spec.Notification{Name: migrate.Str(n, "name"), Type: notifyTypes[st]}
	switch {
	case out.Type == "":
		im.report.Add(d, field+".type", "notification type %q: not carried over (regatta sends to %v)", st, spec.NotificationTypes)
		return out, false
	case out.Type == spec.NotifyEvent:
		im.report.Add(d, field, "Kubernetes Events are recorded in regatta's --notify-namespace, reason the happening (Sveltos' reason was ClusterHealthCheck)")
		return out, true
	}
	ref := migrate.Map(n, "notificationRef")
	name := migrate.Str(ref, "name")
	if name == "" || migrate.Str(ref, "kind") != "Secret" {
		im.report.Add(d, field+".notificationRef", "a %s notification needs a Secret: not carried over", st)
		return out, false
	}
	out.SecretRef = &spec.LocalSecretRef{Name: name}
	im.report.Add(d, field+".notificationRef", "Secret %s/%s: regatta reads it from its own namespace (--notify-namespace), with other keys than Sveltos': %s",
		migrate.Str(ref, "namespace"), name, secretKeys[st])
	return out, true
}
