package status

import (
	"fmt"
	"sort"
	"strings"
)

// Pair states, as the apply engine reports them.
const (
	StateApplied              = "Applied"
	StateProgressing          = "Progressing"
	StateWaitingForDependency = "WaitingForDependency"
	StateFailed               = "Failed"
	StateConflict             = "Conflict"
	StateDryRun               = "DryRun"
	StateWithdrawn            = "Withdrawn"
	StatePaused               = "Paused"
)

var stateMarks = map[string]string{
	StateApplied:              "✅",
	StateProgressing:          "⏳",
	StateWaitingForDependency: "⏸️",
	StateFailed:               "❌",
	StateConflict:             "⚠️",
	StateDryRun:               "🔍",
	StateWithdrawn:            "➖",
	StatePaused:               "⏸️",
	StateWaitingForRollout:    "🚦",
}

// maxDashboardRows bounds the dashboard's cluster rows and problem lines,
// so that it stays readable for a fleet of thousands: beyond it, clusters
// whose pairs are all Applied are counted rather than drawn, and further
// problems are counted (every cluster's file under status/clusters/ has
// them all).
const maxDashboardRows = 50

// RenderDashboard renders the fleet as Markdown: the summary, every problem
// with its first error, then a clusters × profiles table with state and
// revision (in a fleet of more than maxDashboardRows clusters, only the
// clusters that need a look).
func RenderDashboard(s Snapshot) string {
	var b strings.Builder
	b.WriteString("# Fleet status\n\n")
	b.WriteString("_Written by regatta. Do not edit: regatta overwrites it._\n\n")
	writeSummary(&b, s)
	if len(s.Clusters) == 0 {
		b.WriteString("No clusters.\n")
		return b.String()
	}
	writeProblems(&b, s.Clusters)
	writeClusterTable(&b, s.Clusters)
	writeRollouts(&b, s.Fleet.Rollouts)
	writeDependencies(&b, s.Fleet.DependsOn)
	return b.String()
}

// writeClusterTable draws the clusters × profiles table: every cluster of
// a small fleet; in a large one the clusters that need a look, the others
// counted.
func writeClusterTable(b *strings.Builder, clusters []ClusterStatus) {
	profiles := profileNames(clusters)
	rows, fine := clusters, 0
	if len(clusters) > maxDashboardRows {
		rows = nil
		for _, c := range clusters {
			if allApplied(c) {
				fine++
			} else {
				rows = append(rows, c)
			}
		}
	}
	b.WriteString("| cluster | reachable | Kubernetes |")
	for _, p := range profiles {
		fmt.Fprintf(b, " %s |", text(p))
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(profiles)) + "\n")
	for i, c := range rows {
		if i == maxDashboardRows {
			fmt.Fprintf(b, "\n… and %d more clusters that need a look: see `%s/`.\n", len(rows)-i, ClustersDir)
			break
		}
		writeClusterRow(b, c, profiles)
	}
	if fine > 0 {
		fmt.Fprintf(b, "\n%d clusters with every pair Applied are counted, not drawn: see `%s/`.\n", fine, ClustersDir)
	}
	b.WriteString("\n")
}

// allApplied reports whether a cluster is reachable, not paused and each
// of its pairs Applied: nothing to look at.
func allApplied(c ClusterStatus) bool {
	if !c.Reachable || c.Paused || c.Error != "" || len(c.ClassifierErrors) > 0 || len(c.LabelNotes) > 0 {
		return false
	}
	for _, p := range c.Profiles {
		if p.State != StateApplied {
			return false
		}
	}
	return true
}

func writeSummary(b *strings.Builder, s Snapshot) {
	f := s.Fleet
	fmt.Fprintf(b, "Source revision `%s`", ShortRevision(f.SourceRevision))
	if f.AppliedRevision != "" && f.AppliedRevision != f.SourceRevision {
		fmt.Fprintf(b, " · in force: `%s`", ShortRevision(f.AppliedRevision))
	}
	fmt.Fprintf(b, " · %d clusters · %d profiles\n\n", len(s.Clusters), len(profileNames(s.Clusters)))
	writePairCounts(b, s)
	writeRefusedTenants(b, f.RefusedTenants)
	writeVerification(b, f.Verification)
	if len(f.Errors) == 0 {
		return
	}
	fmt.Fprintf(b, "> ❌ **Revision `%s` is not in force**: the clusters keep `%s`.\n>\n", ShortRevision(f.SourceRevision), ShortRevision(f.AppliedRevision))
	for _, e := range f.Errors {
		fmt.Fprintf(b, "> - %s\n", formatError(e))
	}
	b.WriteString("\n")
}

// writeVerification names the signing key of the revision in force, or
// the commit, key and reason of a refused one.
func writeVerification(b *strings.Builder, v *Verification) {
	if v == nil {
		return
	}
	if v.Accepted {
		fmt.Fprintf(b, "Signature check (%s): accepted, signed by %s\n\n", text(v.Mode), keyText(v))
		return
	}
	fmt.Fprintf(b, "> 🔏 **Signature check (%s) refused commit `%s`**: %s", text(v.Mode), ShortRevision(v.Commit), text(v.Reason))
	if v.File != "" {
		fmt.Fprintf(b, " at `%s`", text(v.File))
	}
	if v.Key != "" {
		fmt.Fprintf(b, ", key %s", keyText(v))
	}
	b.WriteString("\n\n")
}

func keyText(v *Verification) string {
	if v.Signer == "" {
		return "`" + text(v.Key) + "`"
	}
	return fmt.Sprintf("`%s` (%s)", text(v.Key), text(v.Signer))
}

// writeRefusedTenants lists the tenants whose folders do not load, with
// their errors.
func writeRefusedTenants(b *strings.Builder, ts []RefusedTenant) {
	for _, t := range ts {
		fmt.Fprintf(b, "> ❌ **Tenant %s is refused**: its folder does not load, so its profiles keep their last good state.\n>\n", text(t.Tenant))
		for _, e := range t.Errors {
			fmt.Fprintf(b, "> - %s\n", formatError(e))
		}
		b.WriteString("\n")
	}
}

// writePairCounts says how many pairs are in each state and how many are
// on another revision than the one in force (still moving, pinned by
// OneTime, or unreachable).
func writePairCounts(b *strings.Builder, s Snapshot) {
	counts := map[string]int{}
	other, total := 0, 0
	for _, c := range s.Clusters {
		for _, p := range c.Profiles {
			counts[p.State]++
			total++
			if p.Revision != "" && s.Fleet.AppliedRevision != "" && p.Revision != s.Fleet.AppliedRevision {
				other++
			}
		}
	}
	if total == 0 {
		return
	}
	var parts []string
	for _, st := range stateOrder {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	fmt.Fprintf(b, "Pairs: %s", strings.Join(parts, ", "))
	if other > 0 {
		fmt.Fprintf(b, " · %d on another revision than `%s`", other, ShortRevision(s.Fleet.AppliedRevision))
	}
	b.WriteString("\n\n")
}

// stateOrder is the order of states in the pair counts.
var stateOrder = []string{StateApplied, StateProgressing, StateWaitingForDependency, StateFailed, StateConflict,
	StateDryRun, StateWithdrawn, StatePaused}

func writeClusterRow(b *strings.Builder, c ClusterStatus, profiles []string) {
	reach := "yes"
	switch {
	case c.Paused:
		reach = "paused"
	case !c.Reachable:
		reach = "❌ no"
	}
	name := c.Cluster
	if c.Owner != "" { // replicas share the fleet: which one reconciles it
		name += " (" + c.Owner + ")"
	}
	fmt.Fprintf(b, "| %s | %s | %s |", text(name), reach, text(orDash(c.KubernetesVersion)))
	byName := map[string]Profile{}
	for _, p := range c.Profiles {
		byName[p.Name] = p
	}
	for _, name := range profiles {
		p, ok := byName[name]
		if !ok {
			b.WriteString(" |")
			continue
		}
		fmt.Fprintf(b, " %s %s", stateMarks[p.State], text(p.State))
		if p.Revision != "" {
			fmt.Fprintf(b, " `%s`", ShortRevision(p.Revision))
		}
		for _, a := range p.Artifacts {
			fmt.Fprintf(b, " · %s %s", text(a.Addon), code(ShortDigest(a.Digest)))
		}
		b.WriteString(" |")
	}
	b.WriteString("\n")
}

func writeProblems(b *strings.Builder, clusters []ClusterStatus) {
	var lines []string
	for _, c := range clusters {
		cluster := text(c.Cluster)
		if c.Error != "" {
			lines = append(lines, fmt.Sprintf("- **%s**: %s", cluster, text(c.Error)))
		}
		for _, e := range c.ClassifierErrors {
			lines = append(lines, fmt.Sprintf("- **%s**: classifier %s failed: %s", cluster, code(e.Classifier), text(e.Message)))
		}
		for _, n := range c.LabelNotes {
			lines = append(lines, fmt.Sprintf("- **%s**: label %s %s: %s", cluster, code(n.Key), text(n.Reason), text(n.Message)))
		}
		lines = append(lines, healthCheckProblems(cluster, c.HealthChecks)...)
		for _, p := range c.Profiles {
			pair := fmt.Sprintf("- **%s / %s** (%s)", cluster, text(p.Name), text(p.State))
			if p.Error != nil {
				lines = append(lines, pair+": "+formatError(*p.Error))
			} else if p.State == StateWaitingForDependency || p.State == StateConflict || p.State == StateProgressing {
				lines = append(lines, pair+": "+text(p.Message))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("## Problems\n\n")
	if len(lines) > maxDashboardRows {
		more := len(lines) - maxDashboardRows
		lines = append(lines[:maxDashboardRows], fmt.Sprintf("- … and %d more problems: see `%s/`", more, ClustersDir))
	}
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n\n")
}

// healthCheckProblems are the dashboard's lines of a cluster's health
// checks that failed to run or found Degraded resources (the first one
// named).
func healthCheckProblems(cluster string, hcs []HealthCheck) []string {
	var lines []string
	for _, h := range hcs {
		head := fmt.Sprintf("- **%s**: health check %s of alert %s", cluster, code(h.Check), code(h.Alert))
		switch {
		case h.Error != "":
			lines = append(lines, head+" could not run: "+text(h.Error))
		case h.Degraded > 0:
			line := fmt.Sprintf("%s: %d Degraded", head, h.Degraded)
			if len(h.Resources) > 0 {
				r := h.Resources[0]
				line += fmt.Sprintf(", first %s (%s)", code(r.Object), text(r.Message))
			}
			lines = append(lines, line)
		}
	}
	return lines
}

func formatError(e Error) string {
	var where []string
	if e.File != "" {
		loc := e.File
		if e.Line > 0 {
			loc = fmt.Sprintf("%s:%d", e.File, e.Line)
		}
		where = append(where, code(loc))
	}
	if e.Object != "" {
		where = append(where, code(e.Object))
	}
	msg := text(e.Message)
	if len(where) == 0 {
		return msg
	}
	return strings.Join(where, " ") + ": " + msg
}

func profileNames(cs []ClusterStatus) []string {
	set := map[string]bool{}
	for _, c := range cs {
		for _, p := range c.Profiles {
			set[p.Name] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ShortRevision abbreviates a commit SHA as Git hosts do ("-" for none).
func ShortRevision(rev string) string {
	if len(rev) > 8 {
		return rev[:8]
	}
	if rev == "" {
		return "-"
	}
	return rev
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
