package notify

import (
	"fmt"
	"strings"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// Message is one fleet-aware message: one subject (a kind of happening,
// on one profile, at one revision) over every cluster it touched.
type Message struct {
	Alert    string   `json:"alert"`
	Kind     string   `json:"kind"`
	Resolved bool     `json:"resolved"`
	Profile  string   `json:"profile,omitempty"`
	Revision string   `json:"revision,omitempty"`
	Stage    string   `json:"stage,omitempty"`
	Clusters []string `json:"clusters,omitempty"`
	Count    int      `json:"count"`
	// Details are the first errors, each "cluster: file:line: message".
	Details []string `json:"details,omitempty"`
	// Command is the commit to make: the revert, the approval.
	Command string `json:"command,omitempty"`
	// Link is the dashboard entry on the Git host.
	Link  string `json:"link,omitempty"`
	Title string `json:"title"`
	// Text is the body, plain text, lines apart.
	Text string `json:"text"`
}

// maxClustersNamed is how many clusters a message names; the count says
// the rest.
const maxClustersNamed = 10

// compose writes the message of a firing subject, or of its resolution.
func compose(f *firing, resolved bool, link string) Message {
	m := Message{Alert: f.alert, Kind: f.subject.Kind, Resolved: resolved, Profile: f.subject.Profile,
		Revision: f.subject.Revision, Stage: f.stage, Count: len(f.clusters), Link: link}
	for _, c := range f.clusters {
		if c != "" && len(m.Clusters) < maxClustersNamed { // a resolution knows the first names only
			m.Clusters = append(m.Clusters, c)
		}
	}
	m.Title, m.Command = headline(f), command(f)
	if resolved {
		m.Title, m.Command = "Resolved: "+m.Title, ""
	} else {
		m.Details = f.details
	}
	m.Text = body(m)
	return m
}

// headline is a message's one line.
func headline(f *firing) string {
	s := f.subject
	rev := status.ShortRevision(s.Revision)
	n := len(f.clusters)
	switch s.Kind {
	case spec.AlertOnFailed:
		return fmt.Sprintf("profile %s failed on %s at %s", s.Profile, clusters(n), rev)
	case spec.AlertOnConflict:
		return fmt.Sprintf("profile %s is in conflict on %s at %s", s.Profile, clusters(n), rev)
	case spec.AlertOnProgressing:
		return fmt.Sprintf("profile %s is not healthy past its health timeout on %s at %s", s.Profile, clusters(n), rev)
	case spec.AlertOnRolloutHalted:
		return fmt.Sprintf("rollout of %s halted at stage %s (revision %s)", s.Profile, f.stage, rev)
	case spec.AlertOnAwaitingApproval:
		return fmt.Sprintf("rollout of %s awaits approval for stage %s (revision %s)", s.Profile, f.stage, rev)
	case spec.AlertOnRolloutDone:
		return fmt.Sprintf("rollout of %s is done (revision %s)", s.Profile, rev)
	case spec.AlertOnRevisionRefused:
		if t, ok := strings.CutPrefix(s.Profile, "tenant:"); ok {
			return fmt.Sprintf("revision %s: tenant %s refused; its last good state stays in force", rev, t)
		}
		return fmt.Sprintf("revision %s kept out; the last good revision stays in force", rev)
	case spec.AlertOnUnreachable:
		return fmt.Sprintf("%s unreachable", clusters(n))
	case spec.AlertOnAgentSilent:
		return fmt.Sprintf("the agents of %s are silent", clusters(n))
	case spec.AlertOnDriftCorrected:
		return fmt.Sprintf("drift of profile %s corrected on %s", s.Profile, clusters(n))
	case spec.AlertOnEventInstance:
		return fmt.Sprintf("event add-on instances of %s changed on %s", s.Profile, clusters(n))
	case spec.AlertOnHealthCheckDegraded:
		return fmt.Sprintf("health check %s of alert %s reports resources Degraded on %s", s.Profile, f.alert, clusters(n))
	}
	return s.String()
}

func clusters(n int) string {
	if n == 1 {
		return "1 cluster"
	}
	return fmt.Sprintf("%d clusters", n)
}

// command is the commit that answers the message, when there is one.
func command(f *firing) string {
	s := f.subject
	switch s.Kind {
	case spec.AlertOnFailed, spec.AlertOnConflict, spec.AlertOnProgressing, spec.AlertOnRolloutHalted:
		return fmt.Sprintf("revert: git revert %s (or fix forward in a new commit)", s.Revision)
	case spec.AlertOnAwaitingApproval:
		return fmt.Sprintf("approve: commit %s/%s.yaml with spec.approvals: [{stage: %s, revision: %s}]",
			spec.RolloutsDir, s.Profile, f.stage, s.Revision)
	case spec.AlertOnRevisionRefused:
		return "fix the file named above in a new commit: nothing of the refused revision is applied or deleted"
	}
	return ""
}

// body is the plain-text message.
func body(m Message) string {
	var b strings.Builder
	b.WriteString(m.Title)
	if len(m.Clusters) > 0 {
		fmt.Fprintf(&b, "\nclusters: %s", strings.Join(m.Clusters, ", "))
		if m.Count > len(m.Clusters) {
			fmt.Fprintf(&b, " and %d more", m.Count-len(m.Clusters))
		}
	}
	for _, d := range m.Details {
		fmt.Fprintf(&b, "\n- %s", d)
	}
	if m.Command != "" {
		fmt.Fprintf(&b, "\n%s", m.Command)
	}
	if m.Link != "" {
		fmt.Fprintf(&b, "\n%s", m.Link)
	}
	return b.String()
}
