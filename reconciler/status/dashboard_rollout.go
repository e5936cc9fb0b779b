package status

import (
	"fmt"
	"strings"
)

var progressMarks = map[string]string{
	"Done":             "✅",
	"Soaking":          "🕒",
	"Rolling":          "⏳",
	"Waiting":          "⏸️",
	"AwaitingApproval": "✋",
	"OutsideWindow":    "🌙",
	"Halted":           "❌",
	"Paused":           "⏸️",
}

// writeRollouts writes each rolling profile: revision, stage, counts,
// why it waits or halted, and its stages as a Mermaid diagram, which Git
// hosts draw as a picture.
func writeRollouts(b *strings.Builder, rs []RolloutStatus) {
	if len(rs) == 0 {
		return
	}
	b.WriteString("## Rollouts\n\n")
	for _, r := range rs {
		fmt.Fprintf(b, "### %s · revision `%s`\n\n", text(r.Profile), ShortRevision(r.Revision))
		switch {
		case r.Halted:
			fmt.Fprintf(b, "> ❌ **Halted** at stage %s: %s\n\n", text(r.Stage), text(r.Reason))
		case r.Complete:
			b.WriteString("Complete: every cluster is applied and healthy.\n\n")
		case r.Reason != "":
			fmt.Fprintf(b, "At stage **%s**: %s\n\n", text(r.Stage), text(r.Reason))
		default:
			fmt.Fprintf(b, "At stage **%s**.\n\n", text(r.Stage))
		}
		b.WriteString(RolloutMermaid(r))
		b.WriteString("\n")
	}
}

// RolloutMermaid draws a rollout's stages as a Mermaid flowchart: one box
// per stage with its clusters done, updating and waiting.
func RolloutMermaid(r RolloutStatus) string {
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart LR\n")
	for i, s := range r.Stages {
		label := fmt.Sprintf("%s %s<br/>%d done · %d updating · %d waiting", progressMarks[s.Progress], s.Name, s.Done, s.Updating, s.Waiting)
		if s.Failed > 0 {
			label += fmt.Sprintf(" · %d failed", s.Failed)
		}
		fmt.Fprintf(&b, "  s%d[\"%s\"]\n", i, strings.ReplaceAll(label, `"`, "'"))
		if i > 0 {
			fmt.Fprintf(&b, "  s%d --> s%d\n", i-1, i)
		}
	}
	b.WriteString("```\n")
	return b.String()
}

// writeDependencies draws the profiles' dependsOn graph as a Mermaid
// flowchart: an arrow from a profile to each profile that waits for it.
func writeDependencies(b *strings.Builder, deps []ProfileDependency) {
	if len(deps) == 0 {
		return
	}
	b.WriteString("## Profile dependencies\n\n")
	b.WriteString(DependencyMermaid(deps))
	b.WriteString("\n")
}

// DependencyMermaid draws dependsOn edges; nodes are numbered in the order
// they first appear, so the drawing is the same for the same graph.
func DependencyMermaid(deps []ProfileDependency) string {
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart LR\n")
	ids := map[string]string{}
	node := func(name string) string {
		if id, ok := ids[name]; ok {
			return id
		}
		id := fmt.Sprintf("p%d", len(ids))
		ids[name] = id
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", id, name)
		return id
	}
	for _, d := range deps {
		to := node(d.Profile)
		for _, from := range d.DependsOn {
			fmt.Fprintf(&b, "  %s --> %s\n", node(from), to)
		}
	}
	b.WriteString("```\n")
	return b.String()
}
