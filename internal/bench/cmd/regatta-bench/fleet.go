package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
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
	for _, s := range strings.Split(o.fleet.sizes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("-fleet: %w", err)
		}
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
