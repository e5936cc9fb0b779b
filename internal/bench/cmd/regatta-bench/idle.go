package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/internal/bench"
)

// idleMain is `regatta-bench idle`: the memory of idle `regatta run`
// daemons of several builds on one fleet of unreachable clusters, rounds
// alternating between the builds (issue 30's RSS budget). It prints the
// medians and writes every sample to <dir>/idle.json.
//
//	regatta-bench idle -bins before=/tmp/regatta-0a6194c,after=bin/regatta -rounds 3 -wait 90s
func idleMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("idle", flag.ExitOnError)
	bins := fs.String("bins", "regatta=bin/regatta", "label=path of each regatta binary, comma-separated")
	o := bench.IdleOptions{Logf: logf}
	fs.IntVar(&o.Clusters, "clusters", 10, "clusters of the fleet (unreachable)")
	fs.IntVar(&o.Profiles, "profiles", 10, "profiles of 30 objects and one encrypted Secret")
	fs.IntVar(&o.Rounds, "rounds", 3, "rounds; each runs every binary once")
	fs.DurationVar(&o.Wait, "wait", 90*time.Second, "how long each daemon runs before it is read")
	fs.BoolVar(&o.Cold, "cold", true, "drop each binary's pages from the page cache before it starts")
	fs.StringVar(&o.Dir, "dir", "internal/bench/raw/idle", "scratch folder")
	_ = fs.Parse(args)
	for _, b := range splitList(*bins) {
		label, path, ok := strings.Cut(b, "=")
		if !ok {
			return fmt.Errorf("-bins: %q is not label=path", b)
		}
		o.Bins = append(o.Bins, bench.IdleBin{Label: label, Path: abs(path)})
	}
	o.Dir = abs(o.Dir)
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	samples, err := bench.RunIdle(ctx, o)
	if werr := writeIdle(filepath.Join(o.Dir, "idle.json"), samples); err == nil {
		err = werr
	}
	printIdleMedians(o.Bins, samples)
	return err
}

func writeIdle(path string, samples []bench.IdleSample) error {
	data, err := json.MarshalIndent(samples, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// printIdleMedians prints, per binary, the median of each field.
func printIdleMedians(bins []bench.IdleBin, samples []bench.IdleSample) {
	fmt.Printf("%-10s %12s %8s %8s %8s %8s %8s %8s %6s\n", "binary", "size", "VmRSS", "RssAnon", "RssFile", "Pss", "PssAnon", "PssFile", "rounds")
	for _, b := range bins {
		get := func(f func(bench.IdleSample) int64) float64 {
			var v []int64
			for _, s := range samples {
				if s.Label == b.Label {
					v = append(v, f(s))
				}
			}
			if len(v) == 0 {
				return 0
			}
			slices.Sort(v)
			return float64(v[len(v)/2]) / (1 << 20)
		}
		n := 0
		var size int64
		for _, s := range samples {
			if s.Label == b.Label {
				n, size = n+1, s.BinSize
			}
		}
		fmt.Printf("%-10s %12d %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %6d\n", b.Label, size,
			get(func(s bench.IdleSample) int64 { return s.Status["VmRSS"] }),
			get(func(s bench.IdleSample) int64 { return s.Status["RssAnon"] }),
			get(func(s bench.IdleSample) int64 { return s.Status["RssFile"] + s.Status["RssShmem"] }),
			get(func(s bench.IdleSample) int64 { return s.Rollup["Pss"] }),
			get(func(s bench.IdleSample) int64 { return s.Rollup["Pss_Anon"] }),
			get(func(s bench.IdleSample) int64 { return s.Rollup["Pss_File"] + s.Rollup["Pss_Shmem"] }), n)
	}
}
