package flux

import (
	"strings"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// destination is what a Flux Provider type becomes in regatta: the
// notification type and the keys its Secret needs, against Flux's
// (address, token, username, password, proxy, headers).
type destination struct {
	to   string
	keys string
	// channel: regatta reads spec.channel for this type.
	channel bool
	// defaultAddress is the address regatta uses when the Secret has
	// none: a Provider's spec.address equal to it is not needed.
	defaultAddress string
}

// destinations maps the Flux Provider types regatta can send to.
var destinations = map[string]destination{
	"slack": {to: spec.NotifySlack, channel: true, defaultAddress: "https://slack.com/api/chat.postMessage",
		keys: "address (an incoming webhook URL) or token (a bot token, chat:write) with the channel, as Flux's; with a token leave address out (regatta then reads it as the Slack API's base URL, not chat.postMessage)"},
	"msteams": {to: spec.NotifyTeams,
		keys: "address: a Teams workflow webhook (\"Post to a channel when a webhook request is received\"); an Office 365 connector URL (*.webhook.office.com) is not one: regatta posts an Adaptive Card"},
	"discord":    {to: spec.NotifyDiscord, keys: "address: the channel's webhook URL, as Flux's (regatta posts to it, not to its /slack endpoint)"},
	"googlechat": {to: spec.NotifyGoogleChat, keys: "address: the space's webhook URL, as Flux's"},
	"webex": {to: spec.NotifyWebex, channel: true, defaultAddress: "https://webexapis.com/v1/messages",
		keys: "token (the bot's), as Flux's; the room id is the channel; address only to replace https://webexapis.com/v1/messages"},
	"telegram": {to: spec.NotifyTelegram, channel: true, defaultAddress: "https://api.telegram.org",
		keys: "token (the bot's), as Flux's; the chat id is the channel"},
	"generic": {to: spec.NotifyWebhook,
		keys: "address, as Flux's; regatta posts its own JSON message (docs/operations.md \"Destinations\"), not Flux's Event, and sends no headers"},
	"generic-hmac": {to: spec.NotifyWebhook,
		keys: "address, as Flux's, and rename token → secret: regatta signs its own JSON message with X-Regatta-Signature: sha256=<hex>, not X-Signature"},
}

// commitStatusTypes are Flux Provider types that set commit statuses;
// the value is regatta's --commit-status-provider, "" when regatta has
// no such host.
var commitStatusTypes = map[string]string{
	"github": "github", "gitlab": "gitlab", "gitea": "gitea", "bitbucket": "bitbucket",
	"bitbucketserver": "", "azuredevops": "",
}

// provider converts a Flux Provider into the notification of its Alert:
// its type, channel and Secret name (the report says which keys regatta
// reads). It is false, reported, for a type regatta has no destination
// for. suspended is the Provider's spec.suspend.
func (im *importer) provider(p object) (n spec.Notification, suspended bool, ok bool) {
	sm := migrate.Map(p.obj, "spec")
	t := migrate.Str(sm, "type")
	d, ok := destinations[t]
	if !ok {
		im.reportProviderType(p, t)
		return n, false, false
	}
	n = spec.Notification{Name: profileName(p.name()), Type: d.to}
	if d.channel {
		n.Channel = migrate.Str(sm, "channel")
	}
	secret := migrate.Str(sm, "secretRef", "name")
	switch {
	case secret != "":
		im.report.Add(p.doc, "spec.secretRef", "Secret %s/%s: regatta reads it from its own namespace (--notify-namespace); the keys of a %s destination: %s; username, password, proxy and headers are not read",
			p.namespace(), secret, d.to, d.keys)
	default:
		secret = n.Name
		im.report.Add(p.doc, "spec", "Provider %s has no secretRef: the alert names Secret %s, to create in regatta's namespace (--notify-namespace) with the keys of a %s destination: %s",
			p.name(), secret, d.to, d.keys)
	}
	n.SecretRef = &spec.LocalSecretRef{Name: secret}
	if a := migrate.Str(sm, "address"); a != "" && strings.TrimSuffix(a, "/") != d.defaultAddress {
		im.report.Add(p.doc, "spec.address", "regatta reads a destination's address from its Secret only: put this value in Secret %s as address (Flux used it when the Secret had none)", secret)
	}
	suspended, _ = sm["suspend"].(bool)
	im.reportProviderFields(p, d)
	return n, suspended, true
}

// reportProviderType says why a Provider type is not carried over, and
// what regatta offers instead.
func (im *importer) reportProviderType(p object, t string) {
	host, isStatus := commitStatusTypes[t]
	switch {
	case isStatus && host != "":
		im.report.Add(p.doc, "spec.type", "%s sets commit statuses: regatta does that with `regatta run --commit-status-provider %s` (docs/operations.md \"Commit statuses\"), not with an alert: not carried over", t, host)
	case isStatus:
		im.report.Add(p.doc, "spec.type", "%s sets commit statuses: regatta sets them on GitHub, GitLab, Gitea and Bitbucket Cloud only (--commit-status-provider): not carried over", t)
	case t == "alertmanager":
		im.report.Add(p.doc, "spec.type", "alertmanager: not carried over: regatta's chart ships a PrometheusRule on its own metrics for Alertmanager (metrics.prometheusRule.enabled, docs/operations.md \"Alerts on regatta's own metrics\")")
	default:
		im.report.Add(p.doc, "spec.type", "%s: regatta has no such destination (it sends to %s): not carried over; a webhook destination can feed a bridge", t, strings.Join(spec.NotificationTypes, ", "))
	}
}

// reportProviderFields reports the Provider's fields regatta has no
// equivalent of.
func (im *importer) reportProviderFields(p object, d destination) {
	for _, k := range sortedKeys(migrate.Map(p.obj, "spec")) {
		switch {
		case k == "type" || k == "secretRef" || k == "address" || k == "suspend" || k == "interval":
		case k == "channel" && d.channel:
		case k == "proxy" || k == "proxySecretRef":
			im.report.Add(p.doc, "spec."+k, "not carried over: regatta's destinations go through the daemon's HTTP client (HTTPS_PROXY of its environment) under the URL policy")
		default:
			im.report.Add(p.doc, "spec."+k, "not carried over")
		}
	}
}
