package jsonnet

import (
	"errors"
	"fmt"
	"strings"

	gojsonnet "github.com/google/go-jsonnet"
	"github.com/google/go-jsonnet/ast"
)

// Error is a failed evaluation, at the place go-jsonnet gives: the file,
// line and column of a static error, or of the innermost frame of a
// runtime error that lies in a file.
type Error struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Msg is go-jsonnet's message ("RUNTIME ERROR: ...", "STATIC
	// ERROR: ..."), without the place.
	Msg string `json:"msg"`
	// Trace is the formatted stack, as the CLI prints it.
	Trace string `json:"trace,omitempty"`
	Err   error  `json:"-"`
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// errorCapture keeps the raw error go-jsonnet formats, for its place.
type errorCapture struct {
	inner gojsonnet.ErrorFormatter
	err   error
}

func (c *errorCapture) Format(err error) string {
	c.err = err
	return c.inner.Format(err)
}

func (c *errorCapture) SetMaxStackTraceSize(n int) { c.inner.SetMaxStackTraceSize(n) }

func (c *errorCapture) SetColorFormatter(f gojsonnet.ColorFormatter) {
	c.inner.SetColorFormatter(f)
}

// error builds the *Error of a failed evaluation of main.
func (c *errorCapture) error(main string, formatted error) *Error {
	e := &Error{File: main, Msg: firstLine(formatted.Error()), Trace: formatted.Error(), Err: c.err}
	if c.err == nil {
		return e
	}
	var rt gojsonnet.RuntimeError
	if errors.As(c.err, &rt) {
		e.Msg = rt.Error()
		for i := len(rt.StackTrace) - 1; i >= 0; i-- { // innermost last
			if placed(e, rt.StackTrace[i].Loc) {
				break
			}
		}
		return e
	}
	if le, ok := c.err.(interface{ Loc() ast.LocationRange }); ok {
		placed(e, le.Loc())
		e.Msg = strings.TrimSpace(strings.TrimPrefix(e.Msg, locationText(le.Loc())))
	}
	return e
}

// placed sets e's place from loc when loc lies in a file.
func placed(e *Error, loc ast.LocationRange) bool {
	if loc.FileName == "" || !loc.IsSet() || strings.HasPrefix(loc.FileName, "<") {
		return false
	}
	e.File, e.Line, e.Column = loc.FileName, loc.Begin.Line, loc.Begin.Column
	return true
}

func locationText(loc ast.LocationRange) string { return loc.String() }

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
