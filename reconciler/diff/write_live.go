package diff

import (
	"fmt"
	"strings"
)

const driftNote = "drift: not changed by this revision; merging overwrites the cluster's state"

// liveSummary is one line for a compared cluster.
func liveSummary(lc LiveCluster) string {
	switch {
	case lc.Note != "":
		return lc.Note
	case lc.Error != "":
		if lc.Reachable {
			return "not compared: " + lc.Error
		}
		return "unreachable: " + lc.Error
	}
	var n LiveCounts
	for _, p := range lc.Profiles {
		n.Created += p.Counts.Created
		n.Updated += p.Counts.Updated
		n.Deleted += p.Counts.Deleted
		n.Drifted += p.Counts.Drifted
	}
	if n.Created+n.Updated+n.Deleted == 0 && !liveErrors(lc) {
		return "in sync with head"
	}
	return fmt.Sprintf("merging changes +%d ~%d -%d, %d of them drift", n.Created, n.Updated, n.Deleted, n.Drifted)
}

func liveErrors(lc LiveCluster) bool {
	for _, p := range lc.Profiles {
		if p.Error != "" {
			return true
		}
	}
	return false
}

func liveObjectLine(o LiveObject) string {
	s := objectLine(o.ObjectChange)
	if o.Drift {
		s += " — " + driftNote
	}
	return s
}

func liveProfileLine(p LiveProfile) string {
	s := fmt.Sprintf("profile %s (+%d ~%d -%d, %d drift)", p.Profile, p.Counts.Created, p.Counts.Updated, p.Counts.Deleted, p.Counts.Drifted)
	if p.Withdrawn {
		s += ": withdrawn at head"
	}
	if p.Error != "" {
		s += ": " + p.Error
	}
	return s
}

func writeTextLive(b *strings.Builder, lr *LiveReport, c colors) {
	fmt.Fprintf(b, "\n%s\n", c.bold("Live: head compared with each cluster now (server-side dry-run, nothing changed):"))
	for _, lc := range lr.Clusters {
		fmt.Fprintf(b, "  %s: %s\n", c.bold(lc.Cluster), liveSummary(lc))
		for _, p := range lc.Profiles {
			if len(p.Objects) == 0 && p.Error == "" {
				continue
			}
			fmt.Fprintf(b, "    %s\n", liveProfileLine(p))
			for _, o := range p.Objects {
				fmt.Fprintf(b, "      %s\n", c.action(o.Action, liveObjectLine(o)))
				writeTextDiff(b, o.Diff, "        ", c)
			}
		}
	}
}

func writeMarkdownLive(b *strings.Builder, lr *LiveReport) {
	b.WriteString("\n#### Live: head compared with each cluster now\n\n")
	var quiet []string
	for _, lc := range lr.Clusters {
		if liveSummary(lc) == "in sync with head" {
			quiet = append(quiet, lc.Cluster)
			continue
		}
		fmt.Fprintf(b, "<details><summary><b>%s</b>: %s</summary>\n\n", htmlEscape(lc.Cluster), htmlEscape(liveSummary(lc)))
		for _, p := range lc.Profiles {
			if len(p.Objects) == 0 && p.Error == "" {
				continue
			}
			fmt.Fprintf(b, "**%s**\n\n", mdEscape(liveProfileLine(p)))
			for _, o := range p.Objects {
				fmt.Fprintf(b, "- `%s`\n", strings.ReplaceAll(liveObjectLine(o), "`", "'"))
				if o.Diff != "" {
					b.WriteString("\n")
					writeFenced(b, "diff", o.Diff)
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("</details>\n")
	}
	if len(quiet) > 0 {
		fmt.Fprintf(b, "\nIn sync with head: %s\n", mdEscape(ClusterList(quiet, 20)))
	}
}
