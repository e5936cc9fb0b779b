package status

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxText is the most bytes of one text a status record holds: a health
// message, an event, an error. Profiles control these texts (a Lua health
// script writes any message it likes), so each is bounded; the daemon
// logs the full text (Overlong).
const MaxText = 4096

// maxLine is the most bytes of one text on the dashboard.
const maxLine = 300

// truncate cuts s to at most n bytes, at a character boundary, and says
// so visibly: "... [truncated: 123 more bytes]".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… [truncated: %d more bytes]", s[:cut], len(s)-cut)
}

// Bounded returns s cut to MaxText with a visible marker.
func Bounded(s string) string { return truncate(s, MaxText) }

// mdEscaper escapes text for Markdown and the HTML a Markdown renderer
// passes through: no tag, entity, link, image, emphasis, code span or
// table cell can come out of it. (A link or image needs "](" or "<";
// brackets alone stay readable: spec.addons[1].)
var mdEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "|", `\|`, "](", `]\(`,
)

// text makes a text a profile controls safe for one line of the
// dashboard: printable, one line, bounded, escaped.
func text(s string) string {
	return mdEscaper.Replace(truncate(strings.Join(strings.Fields(Printable(s)), " "), maxLine))
}

// code shows s as inline code, escaped as text instead when it could
// close the code span.
func code(s string) string {
	s = Printable(s)
	if s == "" || strings.ContainsAny(s, "`\n\r|") || len(s) > maxLine {
		return text(s)
	}
	return "`" + s + "`"
}

// Printable removes from s what a terminal or a Markdown renderer would
// act on instead of showing: ANSI escape sequences (colours, cursor moves,
// OSC 8 links and window titles) whole, then every other control
// character but tab and newline, and the bidirectional overrides that
// make text read in another order than it is stored. Tenants write these
// texts (a health message, an error quoting their file).
func Printable(s string) string {
	if !strings.ContainsFunc(s, unprintable) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			i += escapeLen(s[i:])
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unprintable(r) || r == '\t' || r == '\n' {
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// unprintable: a control character (C0, DEL, C1) or a bidirectional
// formatting character.
func unprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// escapeLen is the length of the escape sequence s starts with (s[0] is
// ESC): CSI (ESC [ ... final byte), OSC, DCS, SOS, PM and APC strings (up
// to BEL or ESC \), or ESC and one byte.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			switch c := s[i]; {
			case c >= 0x40 && c <= 0x7e:
				return i + 1
			case c < 0x20 || c > 0x7e:
				return i // not a sequence: what follows is text
			}
		}
		return len(s)
	case ']', 'P', 'X', '^', '_':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	return 2
}

// TextField is one text of a status record, by its field path.
type TextField struct {
	Field string
	Text  *string
}

// texts lists the texts of a cluster record that a profile, a cluster or
// a classifier controls.
func texts(c *ClusterStatus) []TextField {
	out := []TextField{{"error", &c.Error}}
	for i := range c.ClassifierErrors {
		out = append(out, TextField{fmt.Sprintf("classifierErrors[%d].message", i), &c.ClassifierErrors[i].Message})
	}
	for i := range c.LabelNotes {
		out = append(out, TextField{fmt.Sprintf("labelNotes[%d].message", i), &c.LabelNotes[i].Message})
	}
	for i := range c.Profiles {
		p := &c.Profiles[i]
		f := fmt.Sprintf("profiles[%d]", i)
		out = append(out, TextField{f + ".health", &p.Health}, TextField{f + ".message", &p.Message})
		if p.Error != nil {
			out = append(out, errorTexts(f+".error", p.Error)...)
		}
		if p.Rollout != nil {
			out = append(out, TextField{f + ".rollout.reason", &p.Rollout.Reason})
		}
		for j := range p.Changes {
			out = append(out, TextField{fmt.Sprintf("%s.changes[%d].object", f, j), &p.Changes[j].Object})
		}
	}
	for i := range c.HealthChecks {
		h := &c.HealthChecks[i]
		f := fmt.Sprintf("healthChecks[%d]", i)
		out = append(out, TextField{f + ".error", &h.Error})
		for j := range h.Resources {
			out = append(out, TextField{fmt.Sprintf("%s.resources[%d].message", f, j), &h.Resources[j].Message})
		}
	}
	return out
}

func errorTexts(field string, e *Error) []TextField {
	return []TextField{{field + ".message", &e.Message}, {field + ".object", &e.Object}, {field + ".file", &e.File}}
}

// fleetTexts lists the texts of the fleet record a repository controls.
func fleetTexts(f *Fleet) []TextField {
	var out []TextField
	for i := range f.Errors {
		out = append(out, errorTexts(fmt.Sprintf("errors[%d]", i), &f.Errors[i])...)
	}
	for i := range f.RefusedTenants {
		rt := &f.RefusedTenants[i]
		for j := range rt.Errors {
			out = append(out, errorTexts(fmt.Sprintf("refusedTenants[%d].errors[%d]", i, j), &rt.Errors[j])...)
		}
	}
	for i := range f.Rollouts {
		out = append(out, TextField{fmt.Sprintf("rollouts[%d].reason", i), &f.Rollouts[i].Reason})
	}
	if v := f.Verification; v != nil {
		out = append(out, TextField{"verification.file", &v.File}, TextField{"verification.message", &v.Message},
			TextField{"verification.signer", &v.Signer})
	}
	return out
}

// boundCluster returns c with every text cut to MaxText; c itself, which
// may share slices with the daemon's records, is left alone.
func boundCluster(c ClusterStatus) ClusterStatus {
	if len(Overlong(c)) == 0 {
		return c
	}
	c.ClassifierErrors = slices.Clone(c.ClassifierErrors)
	c.LabelNotes = slices.Clone(c.LabelNotes)
	c.Profiles = slices.Clone(c.Profiles)
	for i := range c.Profiles {
		p := &c.Profiles[i]
		p.Error, p.Rollout, p.Changes = clonePtr(p.Error), clonePtr(p.Rollout), slices.Clone(p.Changes)
	}
	c.HealthChecks = slices.Clone(c.HealthChecks)
	for i := range c.HealthChecks {
		c.HealthChecks[i].Resources = slices.Clone(c.HealthChecks[i].Resources)
	}
	bound(texts(&c))
	return c
}

// boundFleet is boundCluster for the fleet record.
func boundFleet(f Fleet) Fleet {
	f.Errors, f.Rollouts = slices.Clone(f.Errors), slices.Clone(f.Rollouts)
	f.RefusedTenants, f.Verification = slices.Clone(f.RefusedTenants), clonePtr(f.Verification)
	for i := range f.RefusedTenants {
		f.RefusedTenants[i].Errors = slices.Clone(f.RefusedTenants[i].Errors)
	}
	bound(fleetTexts(&f))
	return f
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// bound cuts every text of the fields to MaxText.
func bound(fields []TextField) {
	for _, t := range fields {
		*t.Text = Bounded(*t.Text)
	}
}

// Overlong returns the texts of a cluster record that the status files
// hold cut to MaxText, in full, for the log.
func Overlong(c ClusterStatus) []TextField {
	var out []TextField
	for _, t := range texts(&c) {
		if len(*t.Text) > MaxText {
			out = append(out, t)
		}
	}
	return out
}
