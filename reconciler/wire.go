package reconciler

import (
	"context"
	"log/slog"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig/cloud"
	"github.com/regatta-dev/regatta/reconciler/metrics"
	"github.com/regatta-dev/regatta/render"
)

// Setup is what a daemon is built from: `regatta run` fills it from its
// flags, the benchmark from its options.
type Setup struct {
	Daemon DaemonOptions
	// Apply configures the apply Manager that Build creates.
	Apply apply.Options
	// Reconciler configures the Reconciler; its Apply is the Manager Build
	// creates, its Metrics are created when nil.
	Reconciler Options
}

// Build wires a daemon: an apply Manager bounded by ctx (Close stops it),
// a Reconciler and the Daemon, with drift corrections counted in the
// metrics.
func Build(ctx context.Context, s Setup) *Daemon {
	ro := s.Reconciler
	if ro.Log == nil {
		ro.Log = slog.New(slog.DiscardHandler)
	}
	if ro.Metrics == nil {
		ro.Metrics = metrics.New()
	}
	if ro.Credentials == nil {
		ro.Credentials = kubeconfig.NewCredentials(ctx, cloud.Options{})
	}
	m := ro.Metrics
	ao := s.Apply
	ao.Logger = ro.Log
	next := ao.OnDrift
	ao.OnDrift = func(ev apply.DriftEvent) {
		if ev.Err == nil {
			m.DriftCorrections.WithLabelValues(ev.Cluster, ev.Profile).Inc()
		}
		if next != nil {
			next(ev)
		}
	}
	ro.Apply = apply.NewManager(ctx, ao)
	return NewDaemon(New(ro), s.Daemon)
}

// Metrics returns the daemon's metrics.
func (d *Daemon) Metrics() *metrics.Metrics { return d.r.opts.Metrics }

// Renderer returns the daemon's renderer.
func (d *Daemon) Renderer() *render.Renderer { return d.r.opts.Renderer }

// Close stops the apply Manager's drift watchers and the event watches.
func (d *Daemon) Close() {
	d.r.events.Close()
	d.r.opts.Apply.Close()
}
