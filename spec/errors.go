package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Severity tells an error from a warning.
type Severity int

// Severities of a Diagnostic.
const (
	SeverityError Severity = iota
	SeverityWarning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == SeverityWarning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one finding of a load, placed at file, line and field.
type Diagnostic struct {
	Severity Severity `json:"-"`
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"`
	Field    string   `json:"field,omitempty"`
	Message  string   `json:"message"`
	// Tenant is set on an error in a tenant's folder: it refuses that
	// tenant's profiles only, not the revision (Admit).
	Tenant string `json:"tenant,omitempty"`
}

// Error formats the diagnostic as "file:line: field: message".
func (d Diagnostic) Error() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d", d.Line)
	}
	b.WriteString(": ")
	if d.Field != "" {
		b.WriteString(d.Field)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// Diagnostics is every finding of one load, errors and warnings.
type Diagnostics []Diagnostic

// Errors returns the findings of error severity.
func (ds Diagnostics) Errors() Diagnostics { return ds.filter(SeverityError) }

// Warnings returns the findings of warning severity.
func (ds Diagnostics) Warnings() Diagnostics { return ds.filter(SeverityWarning) }

func (ds Diagnostics) filter(s Severity) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == s {
			out = append(out, d)
		}
	}
	return out
}

// Err returns an *InvalidError holding the errors, or nil when there are none.
func (ds Diagnostics) Err() error {
	errs := ds.Errors()
	if len(errs) == 0 {
		return nil
	}
	return &InvalidError{Diagnostics: errs}
}

// Sort orders findings by file, line and message so output is stable.
func (ds Diagnostics) Sort() {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		return a.Message < b.Message
	})
}

// InvalidError is returned when a repository revision does not validate.
type InvalidError struct {
	Diagnostics Diagnostics
}

// Error lists every error, one per line.
func (e *InvalidError) Error() string {
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.Error()
	}
	return "invalid repository:\n" + strings.Join(lines, "\n")
}

// Unwrap exposes the individual diagnostics to errors.Is and errors.As.
func (e *InvalidError) Unwrap() []error {
	out := make([]error, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		out[i] = d
	}
	return out
}

// report collects diagnostics for one document.
type report struct {
	src   *Source
	diags *Diagnostics
}

func (r report) errorf(field, format string, args ...any) {
	r.add(SeverityError, field, format, args...)
}

func (r report) warnf(field, format string, args ...any) {
	r.add(SeverityWarning, field, format, args...)
}

func (r report) add(sev Severity, field, format string, args ...any) {
	*r.diags = append(*r.diags, Diagnostic{
		Severity: sev,
		File:     r.src.File,
		Line:     r.src.LineOf(field),
		Field:    field,
		Message:  fmt.Sprintf(format, args...),
	})
}

// parentPath strips the last element of a field path:
// "spec.addons[1].name" -> "spec.addons[1]" -> "spec.addons" -> "spec" -> "".
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}
