package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/regatta-dev/regatta/internal/bench"
)

// goBenchmarks are the hot-function benchmarks: selector matching, graph
// sort, render cache key, inventory diff (and the existing fleet-size
// benchmarks of spec and plan).
var goBenchmarks = []struct{ pkg, pattern string }{
	{"./spec", "^(BenchmarkProfileMatches|BenchmarkSelectorCompile|BenchmarkLoad1000Clusters200Profiles)$"},
	{"./reconciler/plan", "^(BenchmarkWaves|BenchmarkMatchCluster|BenchmarkMatch10000Clusters20Profiles)$"},
	{"./render", "^(BenchmarkCacheKey|BenchmarkRenderCached)$"},
	{"./reconciler/apply", "^(BenchmarkInventoryDiff|BenchmarkInventoryUnchanged|BenchmarkInventoryDecode)$"},
}

// runGoBench runs the Go benchmarks into gobench.txt (benchstat's input).
func runGoBench(ctx context.Context, o *options, res *bench.Results, _ *shared) error {
	var all bytes.Buffer
	for _, b := range goBenchmarks {
		cmd := exec.CommandContext(ctx, goCmd(), "test", "-run", "^$", "-bench", b.pattern, "-benchmem",
			"-count", fmt.Sprint(o.benchCount), b.pkg)
		cmd.Env = append(os.Environ(), "REGATTA_BIN_DIR="+abs(o.binDir))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, &all), os.Stderr
		logf("gobench: %s", b.pkg)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go test -bench %s: %w", b.pkg, err)
		}
	}
	for _, dir := range []string{o.raw, o.results} {
		if err := os.WriteFile(filepath.Join(dir, "gobench.txt"), all.Bytes(), 0o644); err != nil {
			return err
		}
	}
	res.GoBench = bench.ParseGoBench(all.String())
	return nil
}
