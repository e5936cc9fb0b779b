package diff

import (
	"fmt"
	"strings"
)

// colors paints text output; the zero value paints nothing.
type colors struct{ on bool }

func palette(on bool) colors { return colors{on: on} }

func (c colors) paint(code, s string) string {
	if !c.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (c colors) bold(s string) string   { return c.paint("1", s) }
func (c colors) red(s string) string    { return c.paint("31", s) }
func (c colors) green(s string) string  { return c.paint("32", s) }
func (c colors) yellow(s string) string { return c.paint("33", s) }
func (c colors) cyan(s string) string   { return c.paint("36", s) }

// action colours a line by its action.
func (c colors) action(action, s string) string {
	switch action {
	case ActionCreated:
		return c.green(s)
	case ActionUpdated:
		return c.yellow(s)
	case ActionDeleted:
		return c.red(s)
	}
	return s
}

// diffLine colours one line of a unified diff.
func (c colors) diffLine(l string) string {
	switch {
	case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		return c.bold(l)
	case strings.HasPrefix(l, "@@"):
		return c.cyan(l)
	case strings.HasPrefix(l, "+"):
		return c.green(l)
	case strings.HasPrefix(l, "-"):
		return c.red(l)
	}
	return l
}

// text writes the report for a terminal: summary, errors, warnings, then
// each group of clusters with identical changes.
func text(r *Report, c colors) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", c.bold("regatta plan:"), c.bold(headline(r)))
	if r.Summary.Changed {
		fmt.Fprintf(&b, "  %s\n", countsLine(r.Summary))
	}
	fmt.Fprintf(&b, "  %s\n  cluster facts: %s\n  %s\n", revLine(r), factsLine(r.Facts), rendersLine(r.Renders))
	if line := signatureLine(r.Signature); line != "" {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(&b, "\n%s\n", c.red(c.bold("Errors in the head revision:")))
		for _, p := range r.Errors {
			fmt.Fprintf(&b, "  %s\n", problemText(p))
		}
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, "\n%s\n", c.yellow(c.bold("Warnings:")))
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "  ! %s\n", warningText(w))
		}
	}
	writeTextRollouts(&b, r, c)
	writeTenantsText(&b, r.Tenants, c)
	for _, g := range r.Groups {
		writeTextGroup(&b, g, c)
	}
	if r.Live != nil {
		writeTextLive(&b, r.Live, c)
	}
	return b.String()
}

func problemText(p Problem) string {
	if len(p.Clusters) == 0 {
		return p.Text
	}
	return fmt.Sprintf("%s (%s: %s)", p.Text, plural(len(p.Clusters), "cluster"), ClusterList(p.Clusters, 5))
}

func warningText(w Warning) string {
	if len(w.Clusters) == 0 {
		return w.Message
	}
	return fmt.Sprintf("%s (%s)", w.Message, ClusterList(w.Clusters, 5))
}

func writeTextGroup(b *strings.Builder, g Group, c colors) {
	fmt.Fprintf(b, "\n%s %s\n", c.bold("=="), c.bold(groupTitle(g, 10)))
	for _, n := range g.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
	for _, pc := range g.Profiles {
		line := "profile " + profileLine(pc)
		if rs := reasonText(pc); rs != "" {
			line += ": " + rs
		}
		fmt.Fprintf(b, "  %s\n", c.bold(line))
		for _, n := range pc.Notes {
			fmt.Fprintf(b, "    note: %s\n", n)
		}
		for _, a := range pc.Artifacts {
			fmt.Fprintf(b, "    artifact: add-on %s from %s@%s\n", a.Addon, a.URL, a.Digest)
		}
		if len(pc.Instances) > 0 {
			writeTextInstances(b, pc.Instances, c)
			continue
		}
		for _, o := range pc.Objects {
			fmt.Fprintf(b, "    %s\n", c.action(o.Action, objectLine(o)))
			writeTextDiff(b, o.Diff, "      ", c)
		}
	}
}

// writeTextInstances writes an event profile's changes instance by
// instance.
func writeTextInstances(b *strings.Builder, ins []InstanceChange, c colors) {
	for _, in := range ins {
		fmt.Fprintf(b, "    %s\n", c.bold("instance "+instanceLine(in)))
		for _, n := range in.Notes {
			fmt.Fprintf(b, "      note: %s\n", n)
		}
		for _, o := range in.Objects {
			fmt.Fprintf(b, "      %s\n", c.action(o.Action, objectLine(o)))
			writeTextDiff(b, o.Diff, "        ", c)
		}
	}
}

func writeTextDiff(b *strings.Builder, diff, indent string, c colors) {
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if l != "" {
			fmt.Fprintf(b, "%s%s\n", indent, c.diffLine(l))
		}
	}
}

// rendersLine says how many renders ran and how many were shared.
func rendersLine(s RenderStats) string {
	return fmt.Sprintf("renders: %d run, %d shared", s.Run, s.Shared)
}
