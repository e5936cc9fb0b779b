package lua

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCacheCompilesOnce(t *testing.T) {
	r := NewRunner(Options{})
	s := Script{Name: "h.lua", Source: `return {status = "Healthy"}`}
	for range 10 {
		if _, err := r.Health(t.Context(), s, nil); err != nil {
			t.Fatal(err)
		}
	}
	if st := r.Stats(); st.Compiles != 1 || st.Hits != 9 || st.Entries != 1 {
		t.Errorf("stats %+v, want 1 compile and 9 hits", st)
	}
}

func TestCacheKeysOnSourceNotName(t *testing.T) {
	r := NewRunner(Options{})
	src := "local x = nil\nreturn x.y"
	_, errA := r.Run(t.Context(), Script{Name: "a.yaml", Source: src}, nil)
	_, errB := r.Run(t.Context(), Script{Name: "b.yaml", Source: src}, nil)
	if st := r.Stats(); st.Compiles != 1 {
		t.Errorf("compiled %d times", st.Compiles)
	}
	if !strings.HasPrefix(errA.Error(), "a.yaml:2: ") || !strings.HasPrefix(errB.Error(), "b.yaml:2: ") {
		t.Errorf("errors do not carry each caller's name: %v / %v", errA, errB)
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	r := NewRunner(Options{CacheSize: 2})
	script := func(i int) Script { return Script{Name: "s", Source: fmt.Sprintf("return %d", i)} }
	for _, i := range []int{1, 2, 1, 3} { // 2 is the least recently used when 3 arrives
		if err := r.Compile(script(i)); err != nil {
			t.Fatal(err)
		}
	}
	if st := r.Stats(); st.Entries != 2 || st.Compiles != 3 {
		t.Fatalf("stats %+v", st)
	}
	_ = r.Compile(script(1))
	_ = r.Compile(script(2))
	if st := r.Stats(); st.Compiles != 4 {
		t.Errorf("stats %+v: want 1 kept and 2 recompiled", st)
	}
}

func TestCacheKeepsCompileErrors(t *testing.T) {
	r := NewRunner(Options{})
	bad := Script{Name: "bad.lua", Source: "return {"}
	for range 3 {
		if err := r.Compile(bad); !errors.Is(err, ErrSyntax) {
			t.Fatalf("got %v", err)
		}
	}
	if st := r.Stats(); st.Compiles != 1 {
		t.Errorf("compiled a broken script %d times", st.Compiles)
	}
}
