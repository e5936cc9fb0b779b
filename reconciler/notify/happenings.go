package notify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// happening is one thing worth telling about one cluster (or the fleet),
// read from a status snapshot.
type happening struct {
	kind     string // spec.AlertOn*
	profile  string // empty for a cluster's or the fleet's own
	cluster  string // empty for the fleet's
	revision string
	detail   string // the first error or reason, as the record has it
	stage    string // a rollout's stage
	alert    string // the alert whose health check it is; empty for the others
}

// subject groups happenings into one message: the same kind of thing on
// one profile at one revision, whichever clusters it touched.
type subject struct {
	Kind     string `json:"kind"`
	Profile  string `json:"profile,omitempty"`
	Revision string `json:"revision,omitempty"`
}

func (s subject) String() string {
	return fmt.Sprintf("%s/%s@%s", s.Kind, s.Profile, status.ShortRevision(s.Revision))
}

func (h happening) subject() subject {
	return subject{Kind: h.kind, Profile: h.profile, Revision: h.revision}
}

// pairHappenings are the happenings of each profile of a cluster record.
func pairHappenings(c status.ClusterStatus, corrected map[string]int64) []happening {
	var out []happening
	for _, p := range c.Profiles {
		at := p.Revision
		if p.Rollout != nil && p.Rollout.Revision != "" {
			at = p.Rollout.Revision
		}
		if at == "" {
			at = c.SourceRevision
		}
		h := happening{profile: p.Name, cluster: c.Cluster, revision: at, detail: pairDetail(p)}
		switch p.State {
		case status.StateFailed:
			h.kind = spec.AlertOnFailed
		case status.StateConflict:
			h.kind = spec.AlertOnConflict
		case status.StateProgressing:
			if p.Error == nil {
				break
			}
			h.kind = spec.AlertOnProgressing // Progressing with an error: past its health timeout
		}
		if h.kind != "" {
			out = append(out, h)
		}
		if prev, ok := corrected[c.Cluster+"/"+p.Name]; ok && p.DriftCorrections > prev {
			out = append(out, happening{kind: spec.AlertOnDriftCorrected, profile: p.Name, cluster: c.Cluster,
				revision: p.Revision, detail: fmt.Sprintf("%d corrections", p.DriftCorrections-prev)})
		}
	}
	return out
}

// pairDetail is a pair's first error with its place, else its message.
func pairDetail(p status.Profile) string {
	if e := p.Error; e != nil {
		msg := e.Message
		if e.Object != "" {
			msg = e.Object + ": " + msg
		}
		if e.File != "" {
			msg = fmt.Sprintf("%s:%d: %s", e.File, e.Line, msg)
		}
		return msg
	}
	return p.Message
}

// fleetHappenings are the happenings of the fleet record: a revision kept
// out (invalid, a tenant refused) and the rollouts' states.
func fleetHappenings(f status.Fleet) []happening {
	var out []happening
	if len(f.Errors) > 0 && f.SourceRevision != f.AppliedRevision {
		out = append(out, happening{kind: spec.AlertOnRevisionRefused, revision: f.SourceRevision, detail: errorLine(f.Errors[0])})
	}
	for _, t := range f.RefusedTenants {
		h := happening{kind: spec.AlertOnRevisionRefused, profile: "tenant:" + t.Tenant, revision: f.SourceRevision}
		if len(t.Errors) > 0 {
			h.detail = errorLine(t.Errors[0])
		}
		out = append(out, h)
	}
	for _, r := range f.Rollouts {
		h := happening{profile: r.Profile, revision: r.Revision, stage: r.Stage, detail: r.Reason}
		switch {
		case r.Halted:
			h.kind = spec.AlertOnRolloutHalted
		case r.Complete:
			h.kind = spec.AlertOnRolloutDone
		case stageProgress(r, r.Stage) == "AwaitingApproval":
			h.kind = spec.AlertOnAwaitingApproval
		default:
			continue
		}
		out = append(out, h)
	}
	return out
}

func stageProgress(r status.RolloutStatus, stage string) string {
	for _, s := range r.Stages {
		if s.Name == stage {
			return s.Progress
		}
	}
	return ""
}

func errorLine(e status.Error) string {
	if e.File == "" {
		return e.Message
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Message)
	}
	return e.File + ": " + e.Message
}

// healthHappenings are a cluster record's alert health checks that
// report resources Degraded: one happening per (alert, check), the check
// in the subject's profile slot, no revision (the state of the cluster,
// not of a commit), the first resources with their messages as detail.
func healthHappenings(c status.ClusterStatus) []happening {
	var out []happening
	for _, h := range c.HealthChecks {
		if h.Degraded == 0 {
			continue
		}
		out = append(out, happening{kind: spec.AlertOnHealthCheckDegraded, alert: h.Alert, profile: h.Check,
			cluster: c.Cluster, detail: degradedDetail(h)})
	}
	return out
}

// maxResourcesNamed is how many resources of a cluster a detail names;
// maxResourceMessage how many bytes of each one's message it keeps.
const (
	maxResourcesNamed  = 3
	maxResourceMessage = 200
)

// degradedDetail names a check's first Degraded resources and their
// messages: "2 Degraded: Pod web/a (app: back-off), Pod web/b".
func degradedDetail(h status.HealthCheck) string {
	var names []string
	for _, r := range h.Resources {
		if r.Status != "Degraded" || len(names) == maxResourcesNamed {
			continue
		}
		msg := strings.Join(strings.Fields(r.Message), " ")
		if len(msg) > maxResourceMessage {
			msg = strings.ToValidUTF8(msg[:maxResourceMessage], "") + "…"
		}
		if msg != "" {
			names = append(names, r.Object+" ("+msg+")")
		} else {
			names = append(names, r.Object)
		}
	}
	d := fmt.Sprintf("%d Degraded: %s", h.Degraded, strings.Join(names, ", "))
	if more := h.Degraded - len(names); more > 0 {
		d += fmt.Sprintf(" and %d more", more)
	}
	return d
}

// eventInstances names each cluster's event add-on instances, by profile.
func eventInstances(c status.ClusterStatus) map[string][]string {
	out := map[string][]string{}
	for _, p := range c.Profiles {
		for _, in := range p.EventInstances {
			out[p.Name] = append(out[p.Name], in.Name)
		}
		sort.Strings(out[p.Name])
	}
	return out
}
