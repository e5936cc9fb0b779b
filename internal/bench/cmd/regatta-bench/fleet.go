package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/internal/bench"
)

// fleetFlags are the fleet phase's flags (issue 37).
type fleetFlags struct {
	sizes         string
	calibrate     int
	calibrateIdle time.Duration
	perServer     int
	objects       int
	idle          time.Duration
	driftInterval time.Duration
	background    time.Duration
	workers       int
	restart       bool
	shard         int
	shardReplicas int
	shardLease    time.Duration
	flux          string
	fluxConc      int
	fluxNoWatches bool
}

func (f *fleetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.sizes, "fleet", "100,500,1000", "logical cluster counts of the fleet phase, comma-separated (each size starts its own API servers)")
	fs.IntVar(&f.calibrate, "fleet-calibrate", 10, "fleet phase calibration: this many clusters on as many API servers, then on one (0: none)")
	fs.DurationVar(&f.calibrateIdle, "fleet-calibrate-idle", 2*time.Minute, "idle window of the calibration runs; their drift interval is half of it")
	fs.IntVar(&f.perServer, "fleet-per-server", 250, "logical clusters per kube-apiserver in the fleet phase (~250 MiB per server)")
	fs.IntVar(&f.objects, "fleet-objects", 5, "objects per profile in the fleet phase (two profiles per cluster)")
	fs.DurationVar(&f.idle, "fleet-idle", 5*time.Minute, "idle window of the fleet phase after convergence (requests, CPU, memory)")
	fs.DurationVar(&f.driftInterval, "fleet-drift-interval", 5*time.Minute, "regatta's --drift-interval in the fleet phase (its default)")
	fs.DurationVar(&f.background, "fleet-background", 30*time.Second, "window before regatta starts in which the API servers' own requests are counted (subtracted from the idle figures)")
	fs.IntVar(&f.workers, "fleet-setup-workers", 16, "namespace users created at once during the fleet phase's setup")
	fs.IntVar(&f.shard, "fleet-shard", 0, "logical clusters of the fleet phase's shard run: -fleet-shard-replicas `regatta run --replicas-mode shard` share them, one SIGKILLed mid-change (0: none)")
	fs.IntVar(&f.shardReplicas, "fleet-shard-replicas", 3, "replicas of the fleet phase's shard run")
	fs.DurationVar(&f.shardLease, "fleet-shard-lease", 15*time.Second, "membership lease duration of the fleet phase's shard run")
	fs.BoolVar(&f.restart, "fleet-restart", true, "measure a restart of regatta at every fleet size")
	fs.StringVar(&f.flux, "fleet-flux", "", "fleet sizes at which Flux's kustomize-controller (-flux-kustomize-controller) also runs, on API servers of its own, right after regatta's run of that size: one Kustomization per cluster with spec.kubeConfig.secretRef, comma-separated (\"\": none)")
	fs.BoolVar(&f.fluxNoWatches, "fleet-flux-no-watches", true, "at each -fleet-flux size, also run regatta with --drift-watches=false and Flux's interval as drift interval (drift corrected as often as Flux corrects it; no restart or status measured)")
	fs.IntVar(&f.fluxConc, "fleet-flux-concurrent", 20, "kustomize-controller's --concurrent in the fleet phase (20: as fluxcd/flux-benchmark; regatta runs with its default --concurrency 10)")
}

// fleetSizes parses a comma-separated list of fleet sizes.
func fleetSizes(flag, list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s: %q is not a fleet size", flag, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// runFleet runs the calibration, then each fleet size; a size that fails
// is recorded and the next one runs.
func runFleet(ctx context.Context, o *options, res *bench.Results, sh *shared) error {
	res.Fleet = &bench.FleetResult{}
	base := bench.FleetOptions{Objects: o.fleet.objects, DriftInterval: o.fleet.driftInterval, Idle: o.fleet.idle,
		Background: o.fleet.background, SetupWorkers: o.fleet.workers, Restart: o.fleet.restart, Status: true,
		Bins: sh.bins, Logf: logf, Args: strings.Fields(o.daemonArgs)}
	var errs []string
	if n := o.fleet.calibrate; n > 0 {
		for _, per := range []int{1, n} {
			fo := base
			fo.Clusters, fo.PerServer = n, per
			fo.Idle, fo.DriftInterval = o.fleet.calibrateIdle, o.fleet.calibrateIdle/2
			fo.Dir = abs(filepath.Join(o.raw, "fleet", fmt.Sprintf("calibrate-%d-per-%d", n, per)))
			run, err := bench.RunFleet(ctx, fo)
			if err != nil {
				run.Err = err.Error()
				errs = append(errs, fmt.Sprintf("calibration %d per server: %v", per, err))
			}
			res.Fleet.Calibration = append(res.Fleet.Calibration, *run)
		}
	}
	sizes, err := fleetSizes("-fleet", o.fleet.sizes)
	if err != nil {
		return err
	}
	fluxSizes, err := o.fluxSizes()
	if err != nil {
		return err
	}
	for _, n := range sizes {
		fo := base
		fo.Clusters, fo.PerServer = n, o.fleet.perServer
		fo.Dir = abs(filepath.Join(o.raw, "fleet", strconv.Itoa(n)))
		run, err := bench.RunFleet(ctx, fo)
		if err != nil {
			run.Err = err.Error()
			errs = append(errs, fmt.Sprintf("%d clusters: %v", n, err))
			logf("fleet %d: %v", n, err)
		}
		res.Fleet.Runs = append(res.Fleet.Runs, *run)
		if ctx.Err() != nil {
			break
		}
		if slices.Contains(fluxSizes, n) {
			errs = append(errs, runFleetFlux(ctx, o, base, n, res.Fleet)...)
		}
	}
	for _, n := range fluxSizes {
		if !slices.Contains(sizes, n) && ctx.Err() == nil {
			errs = append(errs, runFleetFlux(ctx, o, base, n, res.Fleet)...)
		}
	}
	for _, n := range fluxSizes {
		if o.fleet.fluxNoWatches && ctx.Err() == nil {
			errs = append(errs, runFleetNoWatches(ctx, o, base, n, res.Fleet)...)
		}
	}
	if n := o.fleet.shard; n > 0 && ctx.Err() == nil {
		fo := base
		fo.Clusters, fo.PerServer = n, o.fleet.perServer
		fo.Dir = abs(filepath.Join(o.raw, "fleet", fmt.Sprintf("shard-%d", n)))
		sr, err := bench.RunFleetShard(ctx, fo, o.fleet.shardReplicas, o.fleet.shardLease)
		res.Fleet.Shard = sr
		if err != nil {
			errs = append(errs, fmt.Sprintf("shard run, %d clusters: %v", n, err))
			logf("fleet shard: %v", err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// fluxSizes are the sizes at which Flux runs, none without its controller.
func (o *options) fluxSizes() ([]int, error) {
	sizes, err := fleetSizes("-fleet-flux", o.fleet.flux)
	if err != nil || len(sizes) == 0 {
		return nil, err
	}
	if o.health.fluxController == "" {
		return nil, fmt.Errorf("-fleet-flux needs -flux-kustomize-controller")
	}
	if _, err := os.Stat(o.health.fluxController); err != nil {
		return nil, fmt.Errorf("-fleet-flux: %w", err)
	}
	return sizes, nil
}

// runFleetFlux runs Flux's kustomize-controller on n clusters; it returns
// the error to record, if any.
func runFleetFlux(ctx context.Context, o *options, base bench.FleetOptions, n int, res *bench.FleetResult) []string {
	fo := base
	fo.Clusters, fo.PerServer = n, o.fleet.perServer
	fo.Dir = abs(filepath.Join(o.raw, "fleet", fmt.Sprintf("flux-%d", n)))
	flux := bench.FluxOptions{Controller: abs(o.health.fluxController), CRDDirs: o.health.crdDirs(), Concurrent: o.fleet.fluxConc}
	run, err := bench.RunFleetFlux(ctx, fo, flux)
	if err != nil {
		run.Err = err.Error()
		logf("fleet flux %d: %v", n, err)
	}
	res.Flux = append(res.Flux, *run)
	if err != nil {
		return []string{fmt.Sprintf("Flux, %d clusters: %v", n, err)}
	}
	return nil
}

// runFleetNoWatches runs regatta with --drift-watches=false on n clusters
// at Flux's interval (Flux's drift semantics and frequency, for the
// side-by-side); it returns the error to record, if any.
func runFleetNoWatches(ctx context.Context, o *options, base bench.FleetOptions, n int, res *bench.FleetResult) []string {
	fo := base
	fo.Clusters, fo.PerServer = n, o.fleet.perServer
	fo.Restart, fo.Status = false, false
	fo.DriftInterval = bench.FluxInterval
	fo.Args = append(slices.Clone(base.Args), "--drift-watches=false")
	fo.Dir = abs(filepath.Join(o.raw, "fleet", fmt.Sprintf("nowatch-%d", n)))
	run, err := bench.RunFleet(ctx, fo)
	if err != nil {
		run.Err = err.Error()
		logf("fleet %d without drift watches: %v", n, err)
	}
	res.NoWatches = append(res.NoWatches, *run)
	if err != nil {
		return []string{fmt.Sprintf("%d clusters without drift watches: %v", n, err)}
	}
	return nil
}
