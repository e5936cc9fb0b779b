package app

import (
	"context"
	"io"

	"github.com/spf13/pflag"

	"github.com/regatta-dev/regatta/reconciler"
)

// EmbedOptions is what a program that runs regatta's daemon in its own
// process (the benchmark) adds to `regatta run`'s flags.
type EmbedOptions struct {
	// Log receives the daemon's log, as regatta run's stderr.
	Log io.Writer
	// OnPass is called each time the fleet settles (reconciler.DaemonOptions).
	OnPass func(reconciler.PassResult)
	// Regatta is the regatta binary started as the chart render worker:
	// the embedding program is not regatta. Empty renders charts in
	// process (as --helm-render-in-process).
	Regatta string
}

// Embedded is the daemon `regatta run ARGS` runs, built by the same flags
// and wiring, without its listeners, leader election, memory limit and
// --once. Run it with Run; Close it when Run returned.
type Embedded struct {
	*reconciler.Daemon
	f *runFlags
}

// NewDaemon builds the daemon of `regatta run ARGS` (ARGS without "run").
func NewDaemon(ctx context.Context, args []string, o EmbedOptions) (*Embedded, error) {
	f := &runFlags{onPass: o.OnPass}
	fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	f.register(fl)
	if err := fl.Parse(args); err != nil {
		return nil, usageError("%v", err)
	}
	if f.repoURL == "" {
		return nil, usageError("--repo is required")
	}
	f.render.helmWorker.executable = o.Regatta
	f.render.helmWorker.inProcess = f.render.helmWorker.inProcess || o.Regatta == ""
	f.render.programWorker.executable = o.Regatta
	f.render.programWorker.inProcess = f.render.programWorker.inProcess || o.Regatta == ""
	log, err := newLogger(o.Log, f.logFormat, f.logLevel)
	if err != nil {
		return nil, err
	}
	if f.mgmt, err = managementConfig(f.managementKubeconfig); err != nil {
		return nil, err
	}
	if err := f.shard.check(f); err != nil {
		return nil, err
	}
	d, _, err := f.build(ctx, log)
	if err != nil {
		return nil, err
	}
	return &Embedded{Daemon: d, f: f}, nil
}

// Close stops the daemon's watchers and its chart render workers.
func (e *Embedded) Close() {
	e.Daemon.Close()
	_ = e.f.charts.Close()
}
