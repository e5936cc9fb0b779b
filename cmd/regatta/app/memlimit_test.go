package app

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v2, unlimited, v1none := write("memory.max", "1073741824\n"), write("max", "max\n"), write("v1", "9223372036854771712\n")
	missing := filepath.Join(dir, "missing")
	noEnv := func(string) string { return "" }
	withEnv := func(k string) string {
		if k == "GOMEMLIMIT" {
			return "300MiB"
		}
		return ""
	}
	for _, tc := range []struct {
		flag   string
		getenv func(string) string
		files  []string
		want   int64
		set    bool
	}{
		{"auto", noEnv, []string{missing, v2}, 1073741824 / 10 * 9, true},
		{"auto", noEnv, []string{unlimited, v2}, relative, true},
		{"auto", noEnv, []string{v1none}, relative, true},
		{"auto", noEnv, []string{missing}, relative, true},
		{"auto", withEnv, []string{v2}, 0, false},
		{"256Mi", withEnv, nil, 256 << 20, true},
		{"1G", noEnv, nil, 1e9, true},
		{"off", withEnv, nil, math.MaxInt64, true},
		{"0", noEnv, nil, math.MaxInt64, true},
	} {
		got, set, err := memoryLimit(tc.flag, tc.getenv, tc.files)
		if err != nil || got != tc.want || set != tc.set {
			t.Errorf("memoryLimit(%q) = %d, %v, %v; want %d, %v", tc.flag, got, set, err, tc.want, tc.set)
		}
	}
	for _, bad := range []string{"lots", "-5Mi"} {
		if _, _, err := memoryLimit(bad, noEnv, nil); err == nil {
			t.Errorf("memoryLimit(%q) accepted", bad)
		}
	}
}
