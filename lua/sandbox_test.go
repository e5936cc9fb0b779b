package lua

import (
	"errors"
	"strings"
	"testing"
)

func TestSandboxRemovesUnsafeLibraries(t *testing.T) {
	absent := []string{
		"io", "debug", "package", "coroutine", "channel",
		"require", "module", "load", "loadstring", "loadfile", "dofile",
		"collectgarbage", "_printregs", "newproxy",
		"string.dump",
		"os.execute", "os.exit", "os.getenv", "os.remove", "os.rename",
		"os.setenv", "os.setlocale", "os.tmpname", "os.difftime",
	}
	for _, name := range absent {
		t.Run(name, func(t *testing.T) {
			got := mustRun(t, "return "+name+" == nil", nil)
			if got != true {
				t.Errorf("%s is available to scripts", name)
			}
		})
	}
}

func TestSandboxKeepsSafeLibraries(t *testing.T) {
	present := []string{
		"pairs", "ipairs", "next", "pcall", "xpcall", "error", "assert", "select",
		"tostring", "tonumber", "type", "unpack", "setmetatable", "getmetatable",
		"rawget", "rawset", "rawequal", "print",
		"string.format", "string.find", "string.gsub", "string.sub", "string.upper",
		"table.insert", "table.remove", "table.sort", "table.concat",
		"math.floor", "math.max", "math.huge",
		"os.time", "os.date", "os.clock",
		"json.encode", "base64.decode", "strings.split", "semver.compare",
		"getLabel", "getAnnotation", "getCondition",
	}
	for _, name := range present {
		if got := mustRun(t, "return "+name+" ~= nil", nil); got != true {
			t.Errorf("%s is missing", name)
		}
	}
}

func TestSandboxHasNoWayToLoadCode(t *testing.T) {
	for _, src := range []string{
		`return require("os")`,
		`return loadstring("return 1")()`,
		`return dofile("/etc/passwd")`,
		`return io.open("/etc/passwd")`,
		`return os.execute("true")`,
		`return debug.getregistry()`,
		`return string.dump(print)`,
		`return ("x"):dump()`,
	} {
		_, err := run(t, src, nil)
		if err == nil || !strings.Contains(err.Error(), "attempt to call a non-function object") &&
			!strings.Contains(err.Error(), "attempt to index a nil value") {
			t.Errorf("%s: got %v, want a call or index of nil", src, err)
		}
	}
}

func TestSandboxPrintIsSilent(t *testing.T) {
	if got := mustRun(t, `print("hello") return 1`, nil); got != int64(1) {
		t.Errorf("got %v", got)
	}
}

func TestSandboxOsFunctionsWork(t *testing.T) {
	got := mustRun(t, `return {os.date("!%Y-%m-%d", 86400), type(os.time()), type(os.clock())}`, nil)
	want := []any{"1970-01-02", "number", "number"}
	if !equalJSON(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSandboxStatesAreNotShared(t *testing.T) {
	r := NewRunner(Options{})
	s := Script{Name: "leak.lua", Source: `local seen = leaked; leaked = true; string.leaked = true; return seen == nil and string.leaked2 == nil`}
	for range 3 {
		got, err := r.Run(t.Context(), s, nil)
		if err != nil || got != true {
			t.Fatalf("globals leaked between runs: %v %v", got, err)
		}
	}
}

func TestLazyGlobals(t *testing.T) {
	for src, want := range map[string]any{
		`return ("abc"):upper()`:                                                         "ABC",
		`return #("abc"):rep(3)`:                                                         int64(9),
		`return math.max(1, 2) + #string.format("%d", 10)`:                               int64(4),
		`local m = math math = nil return math == nil and m ~= nil`:                      true,
		`return rawget(_G, "json") == nil and json ~= nil and rawget(_G, "json") ~= nil`: true,
		`return undefined_global`:                                                        nil,
		`return _G[1]`:                                                                   nil,
		`local s = string string = nil return ("x"):rep(2) .. s.rep("y", 2)`:             "xxyy",
	} {
		if got := mustRun(t, src, nil); got != want {
			t.Errorf("%s: got %#v, want %#v", src, got, want)
		}
	}
}

// TestConcatIsGuardedEverywhere puts ".." in every place the Lua grammar
// allows an expression; with a 16-byte string limit each must fail.
func TestConcatIsGuardedEverywhere(t *testing.T) {
	r := NewRunner(Options{MaxStringLen: 16})
	for _, src := range []string{
		`local x = s .. s`,
		`x = s .. s`,
		`local t = {} t[s .. s] = 1`,
		`local t = {[s .. s] = 1}`,
		`local t = {s .. s}`,
		`local t = {k = s .. s}`,
		`print(s .. s)`,
		`local t = {f = function() end} t.f(s .. s)`,
		`local t = {} function t:m(x) end t:m(s .. s)`,
		`local x = (s .. s):upper()`,
		`return s .. s`,
		`if s .. s then end`,
		`while s .. s == "" do end`,
		`repeat until s .. s`,
		`for i = #(s .. s), 1 do end`,
		`for i = 1, #(s .. s) do break end`,
		`for i = 1, 2, #(s .. s) do break end`,
		`for k in pairs({[s .. s] = 1}) do end`,
		`local f = function() return s .. s end f()`,
		`local function f() return s .. s end f()`,
		`function g() return s .. s end g()`,
		`do local x = s .. s end`,
		`local x = not (s .. s)`,
		`local x = -#(s .. s)`,
		`local x = 1 + #(s .. s)`,
		`local x = s .. s == "" or false`,
		`local x = false or s .. s`,
		`local x = s .. s < "z"`,
		`if false then elseif s .. s then end`,
		`if false then else local x = s .. s end`,
		`local t = setmetatable({}, {__index = function() return s .. s end}) local x = t.y`,
	} {
		_, err := r.Run(t.Context(), Script{Name: "c.lua", Source: src}, map[string]any{"s": "0123456789"})
		if !errors.Is(err, ErrMemoryLimit) {
			t.Errorf("%s: got %v, want ErrMemoryLimit", src, err)
		}
	}
}

func TestConcatSemantics(t *testing.T) {
	for src, want := range map[string]any{
		`return "a" .. 1 .. 2.5 .. "b"`: "a12.5b",
		`return 1 .. 2`:                 "12",
		`local mt = {__concat = function(a, b) return "meta" end} return setmetatable({}, mt) .. "x"`:   "meta",
		`local mt = {__concat = function(a, b) return a .. "!" end} return "x" .. setmetatable({}, mt)`: "x!",
		`local s = "" for i = 1, 5 do s = s .. i end return s`:                                          "12345",
	} {
		if got := mustRun(t, src, nil); got != want {
			t.Errorf("%s: got %#v, want %#v", src, got, want)
		}
	}
}

func TestTableSort(t *testing.T) {
	src := `local t = {} for i = 1, 10000 do t[i] = (i * 7919) % 10007 end table.sort(t)
for i = 2, #t do if t[i - 1] > t[i] then return false end end
local s = {"b", "c", "a"} table.sort(s) table.sort(t, function(a, b) return a > b end)
return t[1] > t[#t] and table.concat(s) == "abc"`
	if got := mustRun(t, src, nil); got != true {
		t.Errorf("got %v", got)
	}
	if _, err := run(t, `local t = {} for i = 1, 5000 do t[i] = i end t[10] = "x" table.sort(t)`, nil); !errors.Is(err, ErrRuntime) {
		t.Errorf("mixed types: %v", err)
	}
}
