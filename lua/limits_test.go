package lua

import (
	"testing"
	"time"

	glua "github.com/yuin/gopher-lua"
)

// TestMaxArrayIndexIsSafe shows why lowering gopher-lua's package-level
// MaxArrayIndex (it has no per-state limit) is safe: this package sets it
// once, before any state exists, and nothing writes it again; tables past
// the cap keep every value (integer keys from 2^20 on live in the hash
// part) and pairs sees them all; #t and ipairs stop at the cap, as
// limits.go says. The
// other half, that no other package of regatta runs gopher-lua states,
// is hack/check-deps.sh's.
func TestMaxArrayIndexIsSafe(t *testing.T) {
	if glua.MaxArrayIndex != maxArrayIndex {
		t.Fatalf("MaxArrayIndex = %d, want this package's %d", glua.MaxArrayIndex, maxArrayIndex)
	}
	r := NewRunner(Options{Timeout: 30 * time.Second, MemoryLimit: 512 << 20})
	got, err := r.Run(t.Context(), Script{Name: "limits.lua", Source: `
local n = 2^20 + 10
local t = {}
for i = 1, n do t[i] = i end
local seen, sum = 0, 0
for i, v in ipairs(t) do seen = seen + 1 end
for k, v in pairs(t) do sum = sum + 1 end
return {t[n], t[2^20], seen, sum, #t}`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(1<<20 + 10), int64(1 << 20), int64(maxArrayIndex - 1), int64(1<<20 + 10), int64(maxArrayIndex - 1)}
	vs, ok := got.([]any)
	if !ok || len(vs) != len(want) {
		t.Fatalf("got %#v", got)
	}
	for i := range want {
		if vs[i] != want[i] {
			t.Errorf("value %d: got %v (%T), want %v", i, vs[i], vs[i], want[i])
		}
	}
}
