package lua

import (
	"errors"
	"strings"
	"testing"
)

// concatPrelude defines functions returning no, one and several values.
const concatPrelude = `
local function none() end
local function one() return "1" end
local function many() return "a", "b", "c" end
local function nilthen() return nil, "x" end
local obj = {name = "my-app"}
function obj:parts() return "m", "n" end
`

// TestConcatLua51Values checks ".." against the Lua 5.1 reference manual
// (§2.5: a call or ... inside an expression gives exactly its first value;
// §2.5.4: concatenating anything but strings and numbers without __concat
// is an error), for calls returning 0, 1 and several values, in every
// position of a chain.
func TestConcatLua51Values(t *testing.T) {
	for src, want := range map[string]string{
		`return "Waiting for " .. string.gsub("my-app", "-", " ")`:              "Waiting for my app",
		`return string.gsub("my-app", "-", " ") .. "!"`:                         "my app!",
		`return "p" .. one()`:                                                   "p1",
		`return one() .. "p"`:                                                   "1p",
		`return "p" .. many()`:                                                  "pa",
		`return many() .. "p"`:                                                  "ap",
		`return "<" .. many() .. ">"`:                                           "<a>",
		`return many() .. many() .. many()`:                                     "aaa",
		`return "p" .. (many())`:                                                "pa",
		`return "p" .. obj:parts()`:                                             "pm",
		`return "p" .. select(2, many())`:                                       "pb",
		`local function f(...) return "p" .. ... end return f("x", "y")`:        "px",
		`local function f(...) return ... .. "p" end return f("x", "y")`:        "xp",
		`local function f(...) return "<" .. ... .. ">" end return f("x", "y")`: "<x>",
		`local s = "n" .. many() return s .. select("#", many())`:               "na3",
		`return table.concat({"p" .. many()}, ",")`:                             "pa",
		`local t = {"p" .. many(), many()} return table.concat(t, ",")`:         "pa,a,b,c",
		`return ("p" .. many()) .. select("#", "p" .. many())`:                  "pa1",
		`return "p" .. one() .. 2 .. many()`:                                    "p12a",
	} {
		got, err := run(t, concatPrelude+src, nil)
		if err != nil || got != want {
			t.Errorf("%s: got %#v, %v; want %q", src, got, err, want)
		}
	}
}

// TestConcatLua51Errors: a call that returns nothing gives nil in an
// expression, and concatenating nil raises an error, as in Lua 5.1.
func TestConcatLua51Errors(t *testing.T) {
	for src, want := range map[string]string{
		`return "p" .. none()`:                                   "attempt to concatenate a nil value",
		`return none() .. "p"`:                                   "attempt to concatenate a nil value",
		`return "<" .. none() .. ">"`:                            "attempt to concatenate a nil value",
		`return "p" .. nilthen()`:                                "attempt to concatenate a nil value",
		`local function f(...) return "p" .. ... end return f()`: "attempt to concatenate a nil value",
		`return "p" .. {}`:                                       "attempt to concatenate a table value",
		`return true .. "p"`:                                     "attempt to concatenate a boolean value",
		`return "p" .. none`:                                     "attempt to concatenate a function value",
	} {
		_, err := run(t, concatPrelude+src, nil)
		if !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want a runtime error %q", src, err, want)
		}
	}
}

// TestConcatErrorLine: the error names the script's own line.
func TestConcatErrorLine(t *testing.T) {
	_, err := run(t, "local function f() end\nlocal x = 1\nreturn 'p' .. f()", nil)
	var se *ScriptError
	if !errors.As(err, &se) || se.Line != 3 {
		t.Fatalf("got %v, want an error on line 3", err)
	}
}
