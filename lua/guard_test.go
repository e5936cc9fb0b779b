package lua

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestTimeoutStopsInfiniteLoop(t *testing.T) {
	r := NewRunner(Options{Timeout: 100 * time.Millisecond})
	for name, src := range map[string]string{
		"loop":            "local x = 0\nwhile true do x = x + 1 end",
		"pcall swallows":  "while true do pcall(function() while true do end end) end",
		"error handler":   "while true do xpcall(function() while true do end end, function() while true do end end) end",
		"pattern":         `return string.rep("a", 200000):find(".-b")`,
		"greedy pattern":  `return string.rep("a", 200000):find(".*b")`,
		"nested pattern":  `return string.rep("a", 5000):find("(.-)(.-)(.-)b")`,
		"gsub callback":   `return string.rep("a", 100):gsub(".", function() while true do end end)`,
		"sort comparator": `local t = {3, 2, 1} table.sort(t, function(a, b) while true do end end)`,
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := r.Run(t.Context(), Script{Name: "loop.lua", Source: src}, nil)
			elapsed := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want a deadline error", err)
			}
			if !strings.Contains(err.Error(), "did not finish within 100ms") {
				t.Errorf("message %q does not name the deadline", err)
			}
			if elapsed > 900*time.Millisecond {
				t.Errorf("returned after %v, deadline was 100ms", elapsed)
			}
		})
	}
}

func TestTimeoutNamesTheLine(t *testing.T) {
	r := NewRunner(Options{Timeout: 50 * time.Millisecond})
	_, err := r.Run(t.Context(), Script{Name: "loop.lua", Source: "local x = 1\n\nwhile true do\n  x = x + 1\nend"}, nil)
	var se *ScriptError
	if !errors.As(err, &se) || se.Line < 3 || se.Line > 5 || se.Name != "loop.lua" {
		t.Fatalf("got %#v", err)
	}
}

func TestCallerContextIsHonoured(t *testing.T) {
	r := NewRunner(Options{Timeout: time.Minute})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := r.Run(ctx, Script{Name: "loop.lua", Source: "while true do end"}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	_, err = r.Run(ctx, Script{Name: "loop.lua", Source: "while true do end"}, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "within 30ms") {
		t.Fatalf("got %v, want the caller's 30ms deadline", err)
	}
}

func TestInstructionLimit(t *testing.T) {
	r := NewRunner(Options{MaxInstructions: 10000})
	_, err := r.Run(t.Context(), Script{Name: "count.lua", Source: "for i = 1, 1e9 do end"}, nil)
	if !errors.Is(err, ErrInstructionLimit) {
		t.Fatalf("got %v, want ErrInstructionLimit", err)
	}
	if _, err := r.Run(t.Context(), Script{Name: "small.lua", Source: "for i = 1, 100 do end"}, nil); err != nil {
		t.Fatalf("a small script failed: %v", err)
	}
}

func TestStackDepthIsBounded(t *testing.T) {
	for _, src := range []string{
		"local function f() return 1 + f() end return f()",
		"local t = setmetatable({}, {__index = function(t, k) return t[k] end}) return t.x",
		`local s = string.rep("(", 300) .. "a" .. string.rep(")", 300) return s:find(s)`,
		`return #{("x"):rep(1e6):byte(1, -1)}`,
		`local t = {} for i = 1, 1e5 do t[i] = i end return select("#", unpack(t))`,
	} {
		_, err := run(t, src, nil)
		if !errors.Is(err, ErrRuntime) {
			t.Errorf("%s: got %v, want a runtime error", src, err)
		}
	}
}

// memoryBombs each try to exhaust memory in a different way.
var memoryBombs = map[string]string{
	"table":           "local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i, i} end",
	"doubling":        `local s = "x" while true do s = s .. s end`,
	"wide concat":     `local s = string.rep("x", 3e6) local u = s .. s .. s .. s .. s .. s .. s .. s`,
	"rep":             `return string.rep("x", 1e12)`,
	"rep method":      `return ("xy"):rep(2^40)`,
	"pcall rep":       `local ok = pcall(string.rep, "x", 1e12) while true do end`,
	"table.concat":    `local s = string.rep("x", 1e6) local t = {} for i = 1, 10000 do t[i] = s end return table.concat(t)`,
	"format":          `local s = string.rep("x", 1e6) return string.format(string.rep("%s", 100), unpack((function() local t = {} for i = 1, 100 do t[i] = s end return t end)()))`,
	"gsub":            `return (string.rep("x", 1e6):gsub(".", string.rep("y", 1000)))`,
	"gsub capture":    `return (string.rep("x", 1e5):gsub("(.)", "%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0%0"))`,
	"json.encode":     `local s = string.rep("x", 1e6) local t = {} for i = 1, 1000 do t[i] = s end return json.encode(t)`,
	"strings.split":   `return strings.split(string.rep("a", 4e6), "")`,
	"big strings":     `local s = string.rep("x", 4e6 - 16) local t = {} for i = 1, 1e6 do t[i] = s .. i end`,
	"closures":        `local t = {} for i = 1, 1e9 do t[i] = function() return i end end`,
	"sparse index":    `local all = {} for i = 1, 1e6 do local t = {} t[2^20 - 1] = true all[i] = t end`,
	"sparse insert":   `local all = {} for i = 1, 1e6 do local t = {} table.insert(t, 2^20 - 1, true) all[i] = t end`,
	"far index":       `local t = {} t[67108863] = true for i = 1, 1e9 do t[i] = i end`,
	"base64":          `local s = string.rep("x", 3.5e6) return base64.encode(s)`,
	"strings.replace": `return strings.replace(string.rep("x", 1e6), "x", "yyyyyyyyyy")`,
}

func TestMemoryBombsFailCleanly(t *testing.T) {
	r := NewRunner(Options{Timeout: 20 * time.Second, MemoryLimit: 64 << 20, MaxStringLen: 4 << 20})
	peak := watchHeap(t)
	for name, src := range memoryBombs {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := r.Run(t.Context(), Script{Name: name + ".lua", Source: src}, nil)
			if !errors.Is(err, ErrMemoryLimit) {
				t.Fatalf("got %v, want ErrMemoryLimit", err)
			}
			t.Logf("%v after %v", err, time.Since(start).Round(time.Millisecond))
			runtime.GC()
		})
	}
	if p := peak(); p > 256<<20 {
		t.Errorf("heap peaked at %s during the bombs, want under 256 MiB", formatBytes(int64(p)))
	} else {
		t.Logf("heap peaked at %s", formatBytes(int64(p)))
	}
}

// watchHeap samples the live heap every millisecond until the test ends and
// returns a function reporting the peak growth over the starting heap.
func watchHeap(t *testing.T) func() uint64 {
	runtime.GC()
	read := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if now := read(); now > base && now-base > peak.Load() {
					peak.Store(now - base)
				}
			}
		}
	})
	t.Cleanup(func() { close(stop); wg.Wait() })
	return peak.Load
}

func TestLongArraysStillWork(t *testing.T) {
	src := `local t = {} for i = 1, 200000 do t[#t + 1] = i end
local sum = 0 for _, v in ipairs(t) do sum = sum + v end
return {#t, sum, t[200000]}`
	got, err := NewRunner(Options{Timeout: time.Minute}).Run(t.Context(), Script{Name: "long.lua", Source: src}, nil)
	want := []any{int64(200000), int64(200000 * 200001 / 2), int64(200000)}
	if err != nil || !equalJSON(got, want) {
		t.Errorf("got %v %v, want %v", got, err, want)
	}
}

func TestFormatRefusesHugeWidths(t *testing.T) {
	for _, f := range []string{"%999999s", "%.1000f", "%0100d"} {
		_, err := run(t, `return string.format("`+f+`", 1)`, nil)
		if err == nil || !strings.Contains(err.Error(), "invalid format (width or precision too long)") {
			t.Errorf("%s: got %v", f, err)
		}
	}
	if got := mustRun(t, `return string.format("%99.2f|%-5s|%%", 1.5, "ab")`, nil); len(got.(string)) != 99+8 {
		t.Errorf("got %q", got)
	}
}

func TestLimitsLeaveOrdinaryScriptsAlone(t *testing.T) {
	src := `
local parts = {}
for i = 1, 1000 do parts[#parts + 1] = string.format("%03d", i) end
local s = table.concat(parts, ",")
local n = 0
for _ in s:gmatch("%d+") do n = n + 1 end
local enc = json.encode({list = parts, n = n})
return #strings.split(s, ",") == 1000 and n == 1000 and #json.decode(enc).list == 1000`
	if got := mustRun(t, src, nil); got != true {
		t.Fatalf("got %v", got)
	}
}

func TestPathologicalSourcesAreRejected(t *testing.T) {
	r := NewRunner(Options{})
	deep := "return " + strings.Repeat("{", 5000) + strings.Repeat("}", 5000)
	if err := r.Compile(Script{Name: "deep.lua", Source: deep}); !errors.Is(err, ErrSyntax) ||
		!strings.Contains(err.Error(), "deep.lua:1: blocks and expressions nest deeper than 1000 levels") {
		t.Errorf("deep nesting: %v", err)
	}
	big := "return 1 -- " + strings.Repeat("x", 1<<20)
	if err := r.Compile(Script{Name: "big.lua", Source: big}); !errors.Is(err, ErrSyntax) ||
		!strings.Contains(err.Error(), "longer than 1 MiB") {
		t.Errorf("big source: %v", err)
	}
	fine := "return #" + strings.Repeat("{", 150) + strings.Repeat("}", 150) + " .. " + strings.Repeat("'x' .. ", 150) + "'y'"
	if got, err := r.Run(t.Context(), Script{Name: "fine.lua", Source: fine}, nil); err != nil || len(got.(string)) != 152 {
		t.Errorf("moderate nesting: %v %v", got, err)
	}
}

// TestSortIsInterruptible sorts an array without a comparator, which
// gopher-lua does in Go; the step budget must still reach into it.
func TestSortIsInterruptible(t *testing.T) {
	list := make([]any, 200000)
	for i := range list {
		list[i] = int64(-i)
	}
	r := NewRunner(Options{MaxInstructions: 100000, Timeout: time.Minute})
	_, err := r.Run(t.Context(), Script{Name: "sort.lua", Source: "table.sort(t)"}, map[string]any{"t": list})
	if !errors.Is(err, ErrInstructionLimit) {
		t.Fatalf("got %v, want ErrInstructionLimit from inside the sort", err)
	}
}
