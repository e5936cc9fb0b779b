package main

import (
	"context"
	"flag"
	"path/filepath"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/internal/bench"
)

// soakFlags are the soak phase's flags (issue 54). The defaults are the
// long form; `make soak-short` passes the short one.
type soakFlags struct {
	duration, commitEvery, driftEvery, eventEvery, sampleEvery, outage, driftInterval time.Duration
	clusters, perServer, objects                                                      int
}

func (f *soakFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.duration, "soak-duration", 3*time.Hour, "soak phase: how long the workload runs after the first rollout (short form: 10m)")
	fs.IntVar(&f.clusters, "soak-clusters", 1000, "soak phase: logical clusters (short form: 100)")
	fs.IntVar(&f.perServer, "soak-per-server", 250, "soak phase: logical clusters per kube-apiserver (at least two servers run: one restarted, one stopped)")
	fs.IntVar(&f.objects, "soak-objects", 5, "soak phase: objects per profile (two profiles per cluster)")
	fs.DurationVar(&f.commitEvery, "soak-commit-every", time.Minute, "soak phase: a commit this often, rotating a profile change, the spare cluster removed, a tenant change, the spare added back (short form: 20s)")
	fs.DurationVar(&f.driftEvery, "soak-drift-every", 10*time.Second, "soak phase: an object regatta manages changed on a random cluster this often")
	fs.DurationVar(&f.eventEvery, "soak-event-every", 30*time.Second, "soak phase: an event resource created on a random cluster this often, deleted once regatta deployed the event profile's instance (0: never)")
	fs.DurationVar(&f.sampleEvery, "soak-sample-every", time.Minute, "soak phase: RSS, heap, goroutines, descriptors, clone size, watches and requests read this often (short form: 10s)")
	fs.DurationVar(&f.outage, "soak-outage", 5*time.Minute, "soak phase: how long an API server is stopped and the Git host down (short form: 1m)")
	fs.DurationVar(&f.driftInterval, "soak-drift-interval", 5*time.Minute, "soak phase: regatta's --drift-interval (its default)")
}

// runSoak runs the soak phase.
func runSoak(ctx context.Context, o *options, res *bench.Results, sh *shared) error {
	f := o.soak
	so := bench.SoakOptions{Clusters: f.clusters, PerServer: f.perServer, Objects: f.objects, Duration: f.duration,
		CommitEvery: f.commitEvery, DriftEvery: f.driftEvery, EventEvery: f.eventEvery, SampleEvery: f.sampleEvery, Outage: f.outage,
		DriftInterval: f.driftInterval, SetupWorkers: o.fleet.workers, Bins: sh.bins,
		Dir: abs(filepath.Join(o.raw, "soak")), Logf: logf, Args: strings.Fields(o.daemonArgs)}
	sr, err := bench.RunSoak(ctx, so)
	if err != nil {
		sr.Err = err.Error()
	}
	res.Soak = sr
	return err
}
