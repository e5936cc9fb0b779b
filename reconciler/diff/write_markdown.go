package diff

import (
	"fmt"
	"strings"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// markdown writes the report as a pull request comment: summary, errors,
// warnings, then one collapsed <details> per group of clusters with
// identical changes. Groups that do not fit in maxBytes lose their diffs,
// then their object lists.
func markdown(r *Report, maxBytes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### regatta plan: %s\n\n", headline(r))
	if r.Summary.Changed {
		fmt.Fprintf(&b, "%s  \n", countsLine(r.Summary))
	}
	fmt.Fprintf(&b, "%s  \ncluster facts: %s  \n%s\n", mdRevLine(r), factsLine(r.Facts), rendersLine(r.Renders))
	writeMarkdownProblems(&b, r)
	writeTenantsMarkdown(&b, r.Tenants)
	truncated := false
	for i, g := range r.Groups {
		if i == 0 {
			b.WriteString("\n#### Changes\n")
		}
		truncated = writeMarkdownGroup(&b, g, maxBytes) || truncated
	}
	if r.Live != nil {
		writeMarkdownLive(&b, r.Live)
	}
	if truncated {
		b.WriteString("\n_Some diffs are left out to fit a comment: run `regatta plan` locally (or `--output json`) for all of them._\n")
	}
	return b.String()
}

func mdRevLine(r *Report) string {
	return fmt.Sprintf("base `%s` (%s) → head `%s` (%s)",
		status.ShortRevision(r.Base.Revision), mdEscape(r.Base.Ref), status.ShortRevision(r.Head.Revision), mdEscape(r.Head.Ref))
}

func writeMarkdownProblems(b *strings.Builder, r *Report) {
	if len(r.Errors) > 0 {
		b.WriteString("\n#### ⛔ Errors in the head revision\n\n")
		lines := make([]string, len(r.Errors))
		for i, p := range r.Errors {
			lines[i] = problemText(p)
		}
		writeFenced(b, "text", strings.Join(lines, "\n")+"\n")
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n#### ⚠️ Warnings\n\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(b, "- %s\n", mdEscape(warningText(w)))
		}
	}
	writeMarkdownRollouts(b, r)
}

// writeMarkdownGroup writes a group as full as the budget allows and
// reports whether anything was left out.
func writeMarkdownGroup(b *strings.Builder, g Group, maxBytes int) bool {
	for _, detail := range []int{mdDiffs, mdObjects, mdSummary} {
		s := markdownGroup(g, detail)
		if b.Len()+len(s) <= maxBytes || detail == mdSummary {
			b.WriteString(s)
			return detail != mdDiffs
		}
	}
	return true
}

// Levels of detail of a Markdown group.
const (
	mdDiffs = iota
	mdObjects
	mdSummary
)

func markdownGroup(g Group, detail int) string {
	var b strings.Builder
	parts := make([]string, len(g.Profiles))
	for i, pc := range g.Profiles {
		parts[i] = fmt.Sprintf("%s %s %s", pc.Profile, pc.Change, countsShort(pc.Counts))
	}
	fmt.Fprintf(&b, "\n<details><summary><b>%s</b>", htmlEscape(groupTitle(g, 5)))
	if len(parts) > 0 {
		fmt.Fprintf(&b, " — %s", htmlEscape(strings.Join(parts, " · ")))
	}
	b.WriteString("</summary>\n\n")
	if len(g.Clusters) > 5 {
		fmt.Fprintf(&b, "Clusters: %s\n\n", mdEscape(strings.Join(g.Clusters, ", ")))
	}
	for _, n := range g.Notes {
		fmt.Fprintf(&b, "> %s\n\n", mdEscape(n))
	}
	if detail != mdSummary {
		for _, pc := range g.Profiles {
			writeMarkdownProfile(&b, pc, detail)
		}
	}
	b.WriteString("</details>\n")
	return b.String()
}

func writeMarkdownProfile(b *strings.Builder, pc ProfileChange, detail int) {
	fmt.Fprintf(b, "**%s** %s", mdEscape(pc.Profile), pc.Change)
	if rs := reasonText(pc); rs != "" {
		fmt.Fprintf(b, ": %s", mdEscape(rs))
	}
	b.WriteString("\n\n")
	for _, n := range pc.Notes {
		fmt.Fprintf(b, "> %s\n\n", mdEscape(n))
	}
	for _, a := range pc.Artifacts {
		fmt.Fprintf(b, "Artifact of add-on %s: %s\n\n", mdEscape(a.Addon), mdEscape(a.URL+"@"+a.Digest))
	}
	if len(pc.Instances) > 0 {
		writeMarkdownInstances(b, pc.Instances, detail)
		return
	}
	writeMarkdownObjects(b, pc.Objects, detail)
	b.WriteString("\n")
}

func writeMarkdownObjects(b *strings.Builder, objs []ObjectChange, detail int) {
	for _, o := range objs {
		fmt.Fprintf(b, "- `%s`\n", strings.ReplaceAll(objectLine(o), "`", "'"))
		if detail == mdDiffs && o.Diff != "" {
			b.WriteString("\n")
			writeFenced(b, "diff", o.Diff)
		}
	}
}

// writeMarkdownInstances writes an event profile's changes instance by
// instance.
func writeMarkdownInstances(b *strings.Builder, ins []InstanceChange, detail int) {
	for _, in := range ins {
		fmt.Fprintf(b, "*instance %s*\n\n", mdEscape(instanceLine(in)))
		for _, n := range in.Notes {
			fmt.Fprintf(b, "> %s\n\n", mdEscape(n))
		}
		writeMarkdownObjects(b, in.Objects, detail)
		b.WriteString("\n")
	}
}

// writeFenced writes a code block whose fence is longer than any run of
// backticks in the content.
func writeFenced(b *strings.Builder, lang, content string) {
	fence := "```"
	for strings.Contains(content, fence) {
		fence += "`"
	}
	if !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	fmt.Fprintf(b, "%s%s\n%s%s\n\n", fence, lang, content, fence)
}

var mdReplacer = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`, "|", `\|`)

// mdEscape and htmlEscape also drop the control characters and escape
// sequences of the texts profiles write (status.Printable).
func mdEscape(s string) string { return mdReplacer.Replace(status.Printable(s)) }

var htmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func htmlEscape(s string) string { return htmlReplacer.Replace(status.Printable(s)) }
