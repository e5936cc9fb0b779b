package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/internal/bench"
)

func runDaemon(ctx context.Context, o *options, res *bench.Results, sh *shared) error {
	so := bench.SteadyOptions{Clusters: o.clusters, Profiles: o.profiles, Bins: sh.bins,
		DriftInterval: 20 * time.Second, Intervals: 3, DriftSamples: 10, Dir: abs(filepath.Join(o.raw, "daemon")), Logf: logf,
		Args: strings.Fields(o.daemonArgs)}
	st, err := bench.RunSteady(ctx, so, sh.chart)
	res.Steady = st
	return err
}

// runShard runs 3 sharded `regatta run` processes on 9 clusters.
func runShard(ctx context.Context, o *options, res *bench.Results, sh *shared) error {
	so := bench.ShardOptions{
		Clusters:      9,
		Replicas:      3,
		Objects:       30,
		LeaseDuration: o.shardLease,
		Bins:          sh.bins,
		Dir:           abs(filepath.Join(o.raw, "shard")),
		Logf:          logf,
	}
	sr, err := bench.RunShard(ctx, so)
	res.Shard = sr
	return err
}

// runScale plans each fleet size in a child process of its own.
func runScale(ctx context.Context, o *options, res *bench.Results, _ *shared) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, f := range strings.Split(o.scaleSizes, ",") {
		if strings.TrimSpace(f) == "" {
			continue // -scale "": only `regatta plan`
		}
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-scale: %w", err)
		}
		for _, style := range scaleStyles(o) {
			sr, err := scaleOnce(ctx, self, o, n, style)
			if err != nil {
				return err
			}
			res.Scale = append(res.Scale, sr)
		}
	}
	return runPlanCmd(ctx, o, res)
}

func scaleStyles(o *options) []string {
	var out []string
	for _, s := range strings.Split(o.scaleStyles, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// scaleOnce plans one fleet size and style in a child process.
func scaleOnce(ctx context.Context, self string, o *options, n int, style string) (bench.ScaleResult, error) {
	var sr bench.ScaleResult
	dir := filepath.Join(o.raw, "scale", style, strconv.Itoa(n))
	cmd := exec.CommandContext(ctx, self, "scale-child", "-clusters", strconv.Itoa(n), "-profiles", "20",
		"-style", style, "-dir", dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return sr, fmt.Errorf("%d clusters, %s: %w", n, style, err)
	}
	if err := json.Unmarshal(out.Bytes(), &sr); err != nil {
		return sr, fmt.Errorf("%d clusters, %s: %w: %s", n, style, err, out.String())
	}
	logf("scale: %d clusters, %s: load %.1fs, plan %.1fs, peak %d MiB, %d hits, %d misses; change %.1fs (%d misses)",
		n, style, sr.LoadSecs, sr.PlanSecs, sr.PeakRSS>>20, sr.Hits, sr.Misses, sr.ChangeSecs, sr.ChangeMisses)
	return sr, nil
}

// runPlanCmd times `regatta plan` over 1,000 clusters, when the binary has
// the command.
func runPlanCmd(ctx context.Context, o *options, res *bench.Results) error {
	regatta := abs(filepath.Join(o.binDir, "regatta"))
	if err := exec.CommandContext(ctx, regatta, "plan", "--help").Run(); err != nil {
		logf("scale: %s has no plan command: not measured", regatta)
		return nil
	}
	chart, err := bench.StartChartRepo(filepath.Join(o.raw, "scale", "plan-charts"))
	if err != nil {
		return err
	}
	defer chart.Close()
	for _, style := range scaleStyles(o) {
		pr, err := bench.RunPlanCmd(ctx, regatta, o.planClusters, style, chart, abs(filepath.Join(o.raw, "scale")))
		if pr != nil {
			logf("scale: regatta plan over %d clusters, %s: %.1fs, peak %d MiB", o.planClusters, style, pr.Secs, pr.PeakRSS>>20)
			if style == bench.StyleMixed {
				res.PlanCmd = pr
			} else {
				res.PlanCmds = append(res.PlanCmds, pr)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// scaleChild is the scale phase's child: one fleet size, JSON on stdout.
func scaleChild(args []string) int {
	fs := flag.NewFlagSet("scale-child", flag.ExitOnError)
	clusters := fs.Int("clusters", 1000, "simulated clusters")
	profiles := fs.Int("profiles", 20, "profiles")
	dir := fs.String("dir", "internal/bench/raw/scale", "scratch folder")
	style := fs.String("style", bench.StyleMixed, "fleet style: "+strings.Join(bench.Styles, ", "))
	cpu := fs.Bool("cpuprofile", true, "write <dir>/cpu.pprof")
	_ = fs.Parse(args)
	chart, err := bench.StartChartRepo(filepath.Join(*dir, "charts"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer chart.Close()
	stop := startCPUProfile(*cpu, filepath.Join(*dir, "cpu.pprof"))
	res, err := bench.RunScale(context.Background(), *clusters, *profiles, *style, chart, filepath.Join(*dir, "helm"))
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
	return 0
}
