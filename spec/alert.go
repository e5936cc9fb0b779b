package spec

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// KindAlert is the kind of alerts/<name>.yaml.
const KindAlert = "Alert"

// AlertsDir holds the Alert documents.
const AlertsDir = "alerts"

// Alert says which happenings of which clusters and profiles reach whom,
// in the spirit of Sveltos' ClusterHealthCheck and Flux's Alert:
// alerts/<name>.yaml, reviewed like every other change.
type Alert struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta `yaml:"metadata"`
	Spec     AlertSpec  `yaml:"spec"`

	Source Source `yaml:"-"`
	// tenant is the tenant whose folder declares the alert, nil for the
	// platform's; watched are then the profiles it watches (its own).
	tenant  *Tenant
	watched []string
}

// WatchesProfile reports whether the alert watches the profile: a
// platform alert the profiles it names (every one when it names none), a
// tenant's alert those of them that are the tenant's (every one of the
// tenant's when it names none).
func (a *Alert) WatchesProfile(profile string) bool {
	if a.tenant != nil {
		return slices.Contains(a.watched, profile)
	}
	return a.Spec.WatchesProfile(profile)
}

// Tenant returns the tenant whose folder declares the alert, or nil.
func (a *Alert) Tenant() *Tenant { return a.tenant }

// ID names the alert across the repository: its name, or
// <tenant>/<name> for a tenant's.
func (a *Alert) ID() string {
	if a.tenant != nil {
		return a.tenant.Metadata.Name + "/" + a.Metadata.Name
	}
	return a.Metadata.Name
}

// AlertSpec is the body of an Alert.
type AlertSpec struct {
	// ClusterSelector selects the clusters watched; empty selects every
	// cluster.
	ClusterSelector LabelSelector `yaml:"clusterSelector,omitempty"`
	// Profiles names the profiles watched; empty watches every profile.
	Profiles []string `yaml:"profiles,omitempty"`
	// On lists the happenings that send a message (AlertOn*); empty sends
	// on every happening but AlertOnDriftCorrected and AlertOnRolloutDone.
	On []string `yaml:"on,omitempty"`
	// UnreachableFor is how long a cluster stays unreachable before
	// AlertOnUnreachable fires (default 5m).
	UnreachableFor string `yaml:"unreachableFor,omitempty"`
	// HealthChecks are Lua health checks over any kind in the selected
	// clusters, in the spirit of Sveltos' HealthCheck: each fires
	// AlertOnHealthCheckDegraded while it reports a resource Degraded.
	HealthChecks []AlertHealthCheck `yaml:"healthChecks,omitempty"`
	// Notifications are where messages go.
	Notifications []Notification `yaml:"notifications"`
	// Suspend stops the alert's messages without removing it.
	Suspend bool `yaml:"suspend,omitempty"`
}

// Happenings an Alert can send on.
const (
	AlertOnFailed           = "Failed"              // a pair Failed
	AlertOnConflict         = "Conflict"            // a pair in Conflict with another profile or owner
	AlertOnProgressing      = "ProgressingDeadline" // a pair Progressing past its health timeout
	AlertOnRolloutHalted    = "RolloutHalted"
	AlertOnAwaitingApproval = "RolloutAwaitingApproval"
	AlertOnRolloutDone      = "RolloutDone"
	AlertOnRevisionRefused  = "RevisionRefused" // a revision kept out: invalid, a tenant refused, unsigned
	AlertOnUnreachable      = "ClusterUnreachable"
	AlertOnDriftCorrected   = "DriftCorrected"
	AlertOnAgentSilent      = "AgentSilent"
	AlertOnEventInstance    = "EventInstance" // an event add-on instance created or withdrawn
	// AlertOnHealthCheckDegraded: one of the alert's healthChecks reports
	// resources Degraded on a cluster.
	AlertOnHealthCheckDegraded = "HealthCheckDegraded"
)

// AlertHappenings lists every happening an Alert can name, in order.
var AlertHappenings = []string{AlertOnFailed, AlertOnConflict, AlertOnProgressing, AlertOnRolloutHalted,
	AlertOnAwaitingApproval, AlertOnRolloutDone, AlertOnRevisionRefused, AlertOnUnreachable,
	AlertOnDriftCorrected, AlertOnAgentSilent, AlertOnEventInstance, AlertOnHealthCheckDegraded}

// DefaultUnreachableFor is an Alert's unreachableFor when unset.
const DefaultUnreachableFor = 5 * time.Minute

// Notification is one destination of an Alert's messages.
type Notification struct {
	// Name names the destination in logs and status.
	Name string `yaml:"name"`
	// Type is the destination's kind (NotificationTypes).
	Type string `yaml:"type"`
	// SecretRef names a Secret in the management cluster, in regatta's
	// namespace, holding the destination's address and credentials (its
	// keys depend on Type; docs/operations.md "Notifications"). Secrets are
	// never written in the repository in clear.
	SecretRef *LocalSecretRef `yaml:"secretRef,omitempty"`
	// Channel is the chat channel or room where the type needs one and
	// the Secret does not give it (Slack bot token, Telegram chat id).
	Channel string `yaml:"channel,omitempty"`
}

// LocalSecretRef names a Secret in regatta's own namespace.
type LocalSecretRef struct {
	Name string `yaml:"name"`
}

// Notification types.
const (
	NotifySlack      = "slack"
	NotifyTeams      = "teams"
	NotifyDiscord    = "discord"
	NotifyGoogleChat = "googlechat"
	NotifyWebex      = "webex"
	NotifyTelegram   = "telegram"
	NotifySMTP       = "smtp"
	NotifyWebhook    = "webhook"
	NotifyEvent      = "kubernetesEvent"
)

// NotificationTypes lists the destination types, in order.
var NotificationTypes = []string{NotifySlack, NotifyTeams, NotifyDiscord, NotifyGoogleChat, NotifyWebex,
	NotifyTelegram, NotifySMTP, NotifyWebhook, NotifyEvent}

// Watches reports whether the alert names the happening (an empty list
// names all but the two that are news, not trouble).
func (s *AlertSpec) Watches(happening string) bool {
	if len(s.On) == 0 {
		return happening != AlertOnDriftCorrected && happening != AlertOnRolloutDone
	}
	for _, h := range s.On {
		if h == happening {
			return true
		}
	}
	return false
}

// WatchesProfile reports whether the alert watches the profile.
func (s *AlertSpec) WatchesProfile(profile string) bool {
	if len(s.Profiles) == 0 {
		return true
	}
	for _, p := range s.Profiles {
		if p == profile {
			return true
		}
	}
	return false
}

// UnreachableAfter is unreachableFor, defaulted (validated at load).
func (s *AlertSpec) UnreachableAfter() time.Duration {
	d, err := time.ParseDuration(s.UnreachableFor)
	if err != nil || d <= 0 {
		return DefaultUnreachableFor
	}
	return d
}

// loadAlerts reads alerts/<name>.yaml and each tenant's
// tenants/<tenant>/alerts/<name>.yaml, sorted by ID.
func loadAlerts(fsys fs.FS, repo *Repository, diags *Diagnostics) {
	load := func(dir string, t *Tenant) {
		for _, f := range listYAML(fsys, dir, diags) {
			a := &Alert{tenant: t}
			if loadDocument(fsys, f, KindAlert, a, &a.Source, diags) {
				repo.Alerts = append(repo.Alerts, a)
			}
		}
	}
	load(AlertsDir, nil)
	for _, t := range repo.Tenants {
		load(path.Join(path.Dir(t.Source.File), AlertsDir), t)
	}
	sort.Slice(repo.Alerts, func(i, j int) bool { return repo.Alerts[i].ID() < repo.Alerts[j].ID() })
}

// validateAlert checks an Alert: its name, selector, happenings, profiles
// and destinations.
func validateAlert(r *Repository, a *Alert, rep report) {
	checkName(rep, a.Metadata.Name, fileStem(a.Source.File), "file")
	checkLabels(rep, "metadata.labels", a.Metadata.Labels)
	s := &a.Spec
	checkSelector(rep, "spec.clusterSelector", s.ClusterSelector)
	for i, h := range s.On {
		checkEnum(rep, fmt.Sprintf("spec.on[%d]", i), h, AlertHappenings...)
	}
	for i, p := range s.Profiles {
		prof := r.Profile(p)
		switch {
		case prof == nil && !r.failedToLoad(KindProfile, p):
			rep.errorf(fmt.Sprintf("spec.profiles[%d]", i), "profile %q does not exist (%s/%s.yaml)", p, ProfilesDir, p)
		case prof != nil && a.tenant != nil && prof.tenant != a.tenant:
			rep.errorf(fmt.Sprintf("spec.profiles[%d]", i), "profile %q is not tenant %s's: a tenant's alert watches its own profiles only", p, a.tenant.Metadata.Name)
		}
	}
	if a.tenant != nil {
		a.watched = s.Profiles
		if len(s.Profiles) == 0 {
			a.watched = tenantProfileNames(r, a.tenant)
		}
	}
	if s.UnreachableFor != "" {
		if d, err := time.ParseDuration(s.UnreachableFor); err != nil || d <= 0 {
			rep.errorf("spec.unreachableFor", "%q is not a positive duration (for example 5m)", s.UnreachableFor)
		}
	}
	validateAlertHealthChecks(r, a, rep)
	if len(s.Notifications) == 0 {
		rep.errorf("spec.notifications", "at least one notification is required")
	}
	seen := map[string]bool{}
	for i, n := range s.Notifications {
		f := fmt.Sprintf("spec.notifications[%d]", i)
		checkNotification(rep, f, n, seen)
		if a.tenant != nil {
			checkTenantNotification(rep, f, n, a.tenant)
		}
	}
}

// checkTenantNotification refuses a tenant's destination the platform did
// not grant it (tenant.yaml spec.notificationSecrets) and Kubernetes
// Events, which would write in the platform's namespace.
func checkTenantNotification(rep report, f string, n Notification, t *Tenant) {
	switch {
	case n.Type == NotifyEvent:
		rep.errorf(f+".type", "a tenant's alert cannot record Kubernetes Events: they go to the platform's namespace of the management cluster")
	case n.SecretRef != nil && n.SecretRef.Name != "" && !slices.Contains(t.Spec.NotificationSecrets, n.SecretRef.Name):
		rep.errorf(f+".secretRef.name", "Secret %q is not a destination tenant %s may send to: the platform grants them in %s/%s spec.notificationSecrets",
			n.SecretRef.Name, t.Metadata.Name, t.Root(), TenantFile)
	}
}

// tenantProfileNames are the names of a tenant's profiles.
func tenantProfileNames(r *Repository, t *Tenant) []string {
	var out []string
	for _, p := range r.Profiles {
		if p.tenant == t {
			out = append(out, p.Metadata.Name)
		}
	}
	return out
}

func checkNotification(rep report, f string, n Notification, seen map[string]bool) {
	switch {
	case n.Name == "":
		rep.errorf(f+".name", "required")
	case seen[n.Name]:
		rep.errorf(f+".name", "%q is used twice in this alert", n.Name)
	}
	seen[n.Name] = true
	checkEnum(rep, f+".type", n.Type, NotificationTypes...)
	if n.Type == NotifyEvent {
		if n.SecretRef != nil {
			rep.errorf(f+".secretRef", "a kubernetesEvent notification needs no Secret: the events go to the management cluster regatta runs in")
		}
		return
	}
	if n.SecretRef == nil || n.SecretRef.Name == "" {
		rep.errorf(f+".secretRef.name", "required: a Secret in regatta's namespace with the %s destination's address and credentials (never written in the repository)", n.Type)
		return
	}
	checkDNS(rep, f+".secretRef.name", n.SecretRef.Name, validation.IsDNS1123Subdomain)
}
