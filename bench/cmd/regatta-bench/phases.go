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

	"github.com/regatta-dev/regatta/bench"
)

func runDaemon(ctx context.Context, o *options, res *bench.Results, sh *shared) error {
	so := bench.SteadyOptions{Clusters: o.clusters, Profiles: o.profiles, Bins: sh.bins,
		DriftInterval: 20 * time.Second, Intervals: 3, DriftSamples: 10, Dir: abs(filepath.Join(o.raw, "daemon")), Logf: logf}
	st, err := bench.RunSteady(ctx, so, sh.chart)
	res.Steady = st
	return err
}

// runScale plans each fleet size in a child process of its own.
func runScale(ctx context.Context, o *options, res *bench.Results, _ *shared) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, f := range strings.Split(o.scaleSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-scale: %w", err)
		}
		dir := filepath.Join(o.raw, "scale", strconv.Itoa(n))
		cmd := exec.CommandContext(ctx, self, "scale-child", "-clusters", strconv.Itoa(n), "-profiles", "20", "-dir", dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%d clusters: %w", n, err)
		}
		var sr bench.ScaleResult
		if err := json.Unmarshal(out.Bytes(), &sr); err != nil {
			return fmt.Errorf("%d clusters: %w: %s", n, err, out.String())
		}
		logf("scale: %d clusters: load %.1fs, plan %.1fs, peak %d MiB, %d hits, %d misses",
			n, sr.LoadSecs, sr.PlanSecs, sr.PeakRSS>>20, sr.Hits, sr.Misses)
		res.Scale = append(res.Scale, sr)
	}
	return runPlanCmd(ctx, o, res)
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
	pr, err := bench.RunPlanCmd(ctx, regatta, 1000, chart, abs(filepath.Join(o.raw, "scale")))
	res.PlanCmd = pr
	if pr != nil {
		logf("scale: regatta plan over 1000 clusters: %.1fs, peak %d MiB", pr.Secs, pr.PeakRSS>>20)
	}
	return err
}

// scaleChild is the scale phase's child: one fleet size, JSON on stdout.
func scaleChild(args []string) int {
	fs := flag.NewFlagSet("scale-child", flag.ExitOnError)
	clusters := fs.Int("clusters", 1000, "simulated clusters")
	profiles := fs.Int("profiles", 20, "profiles")
	dir := fs.String("dir", "bench/raw/scale", "scratch folder")
	cpu := fs.Bool("cpuprofile", true, "write <dir>/cpu.pprof")
	_ = fs.Parse(args)
	chart, err := bench.StartChartRepo(filepath.Join(*dir, "charts"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer chart.Close()
	stop := startCPUProfile(*cpu, filepath.Join(*dir, "cpu.pprof"))
	res, err := bench.RunScale(context.Background(), *clusters, *profiles, chart, filepath.Join(*dir, "helm"))
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
	return 0
}
