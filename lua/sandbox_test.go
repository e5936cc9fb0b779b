package lua

import (
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
