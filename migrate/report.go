package migrate

import (
	"cmp"
	"fmt"
	"io"
	"slices"
)

// Finding is one thing an import could not carry over, or a note about
// what it did instead, located in the source repository.
type Finding struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (f Finding) String() string {
	loc := f.File
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	if f.Field != "" {
		return fmt.Sprintf("%s: %s: %s", loc, f.Field, f.Message)
	}
	return fmt.Sprintf("%s: %s", loc, f.Message)
}

// Report collects findings; the same finding is kept once.
type Report struct {
	findings []Finding
	seen     map[Finding]bool
}

// Add records a finding about a field of a document.
func (r *Report) Add(d *Doc, field, format string, args ...any) {
	f := Finding{Field: field, Message: fmt.Sprintf(format, args...)}
	if d != nil {
		f.File, f.Line = d.File, d.Line(field)
	}
	r.AddFinding(f)
}

// AddFinding records a finding.
func (r *Report) AddFinding(f Finding) {
	if r.seen == nil {
		r.seen = map[Finding]bool{}
	}
	if r.seen[f] {
		return
	}
	r.seen[f] = true
	r.findings = append(r.findings, f)
}

// Findings returns the findings sorted by file, line and field.
func (r *Report) Findings() []Finding {
	out := slices.Clone(r.findings)
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Field, b.Field), cmp.Compare(a.Message, b.Message))
	})
	return out
}

// Write prints the findings, one per line.
func (r *Report) Write(w io.Writer) error {
	for _, f := range r.Findings() {
		if _, err := fmt.Fprintln(w, f); err != nil {
			return err
		}
	}
	return nil
}
