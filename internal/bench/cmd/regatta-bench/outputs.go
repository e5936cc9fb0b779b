package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/internal/bench"
)

func newResults(o *options) *bench.Results {
	return &bench.Results{Started: time.Now(), Machine: machine(), PhaseSecs: map[string]float64{},
		Options: map[string]string{"phases": o.phases, "rounds": fmt.Sprint(o.rounds),
			"serialEvery": fmt.Sprint(o.serialEvery), "changes": fmt.Sprint(o.changes),
			"clusters": fmt.Sprint(o.clusters), "profiles": fmt.Sprint(o.profiles),
			"scale": o.scaleSizes, "benchCount": fmt.Sprint(o.benchCount), "daemonArgs": o.daemonArgs,
			"rolloutProfile": fmt.Sprint(o.profile), "healthClusters": fmt.Sprint(o.health.clusters),
			"fluxKustomizeController": o.health.fluxController, "fluxConcurrent": fmt.Sprint(o.health.fluxConcurrent),
			"fleet": o.fleet.sizes, "fleetIdle": o.fleet.idle.String(), "fleetCalibrate": fmt.Sprint(o.fleet.calibrate),
			"fleetPerServer": fmt.Sprint(o.fleet.perServer), "fleetDriftInterval": o.fleet.driftInterval.String(),
			"fleetFlux": o.fleet.flux, "fleetFluxConcurrent": fmt.Sprint(o.fleet.fluxConc)}}
}

func machine() bench.Machine {
	m := bench.Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadStart: bench.LoadAverage()}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		m.Kernel = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		fmt.Sscanf(strings.TrimPrefix(strings.SplitN(string(data), "\n", 2)[0], "MemTotal:"), "%d", &kb)
		m.MemBytes = kb << 10
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPUModel = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	return m
}

// writeOutputs writes results.json (raw and committed) and the report.
func writeOutputs(o *options, res *bench.Results) error {
	if old, err := readResults(o); err == nil {
		res.KeepPhases(old, o.has)
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	// results.json is the run the report shows; the dated copy stays as
	// the history of past runs.
	history := res.Started.UTC().Format("2006-01-02") + "-" + res.Machine.Commit + "-" + strings.ReplaceAll(o.phases, ",", "-") + ".json"
	for _, path := range []string{filepath.Join(o.raw, "results.json"), filepath.Join(o.results, "results.json"), filepath.Join(o.results, history)} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(o.report, []byte(bench.Report(res)), 0o644)
}

func rewriteReport(o *options) error {
	res, err := readResults(o)
	if err != nil {
		return err
	}
	return os.WriteFile(o.report, []byte(bench.Report(res)), 0o644)
}

// readResults reads the committed results.json.
func readResults(o *options) (*bench.Results, error) {
	data, err := os.ReadFile(filepath.Join(o.results, "results.json"))
	if err != nil {
		return nil, err
	}
	var res bench.Results
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func startCPUProfile(on bool, path string) func() {
	if !on {
		return func() {}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// profileTops summarises the CPU profiles the run wrote.
func profileTops(ctx context.Context, o *options) []bench.ProfileTop {
	var out []bench.ProfileTop
	var cands []struct{ what, path string }
	if o.profile { // else the file is an earlier run's
		cands = append(cands, struct{ what, path string }{"regatta's first rollout (round 0, in-process daemon)",
			filepath.Join(o.raw, "rollout-regatta.cpu.pprof")})
	}
	for _, n := range strings.Split(o.scaleSizes, ",") {
		n = strings.TrimSpace(n)
		cands = append(cands, struct{ what, path string }{"scale: " + n + " clusters (cold, warm and change plans)",
			filepath.Join(o.raw, "scale", n, "cpu.pprof")})
	}
	for _, c := range cands {
		if _, err := os.Stat(c.path); err != nil {
			continue
		}
		args := []string{"tool", "pprof", "-top", "-nodecount=25", c.path}
		top, err := exec.CommandContext(ctx, goCmd(), args...).Output()
		if err != nil {
			continue
		}
		_ = os.WriteFile(c.path+".top.txt", top, 0o644)
		out = append(out, bench.ProfileTop{What: c.what, Command: "go " + strings.Join(args, " "), Top: string(top)})
	}
	return out
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}
