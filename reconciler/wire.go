package reconciler

import (
	"context"
	"log/slog"
	"time"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig"
	"github.com/regatta-dev/regatta/reconciler/metrics"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/sops"
)

// Setup is what a daemon is built from: `regatta run` fills it from its
// flags, the benchmark from its options.
type Setup struct {
	Daemon   DaemonOptions
	Apply    apply.Options
	Renderer *render.Renderer
	Keys     *sops.Keyring
	// Management reads kubeconfig Secrets from a management cluster.
	Management kubeconfig.SecretGetter
	// Metrics is created when nil.
	Metrics *metrics.Metrics
	Log     *slog.Logger
	// Concurrency, ClusterTimeout and HealthTimeout as in Options.
	Concurrency    int
	ClusterTimeout time.Duration
	HealthTimeout  time.Duration
}

// Build wires a daemon: an apply Manager bounded by ctx (Close stops it),
// a Reconciler and the Daemon, with drift corrections counted in the
// metrics and logged.
func Build(ctx context.Context, s Setup) *Daemon {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	if s.Metrics == nil {
		s.Metrics = metrics.New()
	}
	m, log := s.Metrics, s.Log
	ao := s.Apply
	ao.Logger = log
	next := ao.OnDrift
	ao.OnDrift = func(ev apply.DriftEvent) {
		if ev.Err == nil {
			m.DriftCorrections.WithLabelValues(ev.Cluster, ev.Profile).Inc()
		}
		if next != nil {
			next(ev)
		}
	}
	am := apply.NewManager(ctx, ao)
	r := New(Options{
		Apply:          am,
		Renderer:       s.Renderer,
		Lua:            lua.NewRunner(lua.Options{}),
		Keys:           s.Keys,
		Management:     s.Management,
		Metrics:        m,
		Log:            log,
		Concurrency:    s.Concurrency,
		ClusterTimeout: s.ClusterTimeout,
		HealthTimeout:  s.HealthTimeout,
	})
	return NewDaemon(r, s.Daemon)
}

// Metrics returns the daemon's metrics.
func (d *Daemon) Metrics() *metrics.Metrics { return d.r.opts.Metrics }

// Renderer returns the daemon's renderer.
func (d *Daemon) Renderer() *render.Renderer { return d.r.opts.Renderer }

// Close stops the apply Manager's drift watchers.
func (d *Daemon) Close() { d.r.opts.Apply.Close() }
