package lua

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorsNameTheScriptAndLine(t *testing.T) {
	const name = "profiles/x.yaml spec.healthChecks[0].script"
	for _, tc := range []struct {
		src      string
		want     string
		category error
		line     int
	}{
		{"hs = {}\nlocal ready = obj.status.conditions\nreturn hs", name + ":2: attempt to index a nil value with key 'conditions'", ErrRuntime, 2},
		{"local x = 1\n\nlocal y = x + {}", name + ":3: cannot perform add operation between number and table", ErrRuntime, 3},
		{"hs = {\n  status = \"Healthy\"\n  message = \"x\"\n}", name + ":3: syntax error near 'message'", ErrSyntax, 3},
		{"if true then\n  return 1\n", name + ": syntax error at end of script", ErrSyntax, 0},
		{"local s = 'unterminated\nx = 1", name + ":2: unterminated string near 'unterminated'", ErrSyntax, 2},
		{"error('boom')", name + ":1: boom", ErrRuntime, 1},
		{"error('no position', 0)", name + ": no position", ErrRuntime, 0},
		{"error({code = 1})", name + ": table: ", ErrRuntime, 0},
		{"function evaluate()\n  return nil .. 'x'\nend", name + ":2: attempt to concatenate a nil value", ErrRuntime, 2},
		{"local ok, err = pcall(error, 'inner')\nerror(err, 0)", name + ":1: inner", ErrRuntime, 1},
		{"local ok, err = pcall(function() error('inner') end)\nerror(err)", name + ":2: " + name + ":1: inner", ErrRuntime, 2},
		{"local t = nil\nt.x = 1", name + ":2: attempt to index a nil value with key 'x'", ErrRuntime, 2},
		{"undefined_function()", name + ":1: attempt to call a non-function object", ErrRuntime, 1},
		{"assert(false, 'checked')", name + ":1: checked", ErrRuntime, 1},
		{"string.rep()", name + ":1: bad argument #1 to rep (string expected, got nil)", ErrRuntime, 1},
	} {
		_, err := NewRunner(Options{}).Health(t.Context(), Script{Name: name, Source: tc.src}, map[string]any{})
		var se *ScriptError
		if !errors.As(err, &se) {
			t.Errorf("%q: got %v", tc.src, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, tc.category) || se.Line != tc.line {
			t.Errorf("%q:\n got %q (line %d, %v)\nwant %q (line %d, %v)", tc.src, err, se.Line, se.Err, tc.want, tc.line, tc.category)
		}
		if strings.Contains(err.Error(), "stack traceback") || strings.Contains(err.Error(), ".go:") ||
			strings.Contains(err.Error(), "\x01") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: noise in %q", tc.src, err)
		}
	}
}

func TestUnnamedScripts(t *testing.T) {
	_, err := NewRunner(Options{}).Run(t.Context(), Script{Source: "error('x')"}, nil)
	if err == nil || err.Error() != "script:1: x" {
		t.Errorf("got %v", err)
	}
}
