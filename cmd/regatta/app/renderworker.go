package app

import (
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/sandbox"
)

// renderWorkerCommand is the hidden subcommand regatta starts as its
// program render worker (Jsonnet, ytt; see render/sandbox).
const renderWorkerCommand = "__render-worker"

func newRenderWorkerCommand() *cobra.Command {
	return &cobra.Command{
		Use:    renderWorkerCommand,
		Short:  "render Jsonnet and ytt add-ons for a parent regatta process (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sandbox.Serve(cmd.InOrStdin(), cmd.OutOrStdout(), render.WorkerHandlers(), 0)
		},
	}
}

// programWorkerFlags bound Jsonnet and ytt renders.
type programWorkerFlags struct {
	timeout    time.Duration
	maxMemory  string
	inProcess  bool
	executable string // the regatta binary; default: this process's
}

func (p *programWorkerFlags) register(fl *pflag.FlagSet) {
	fl.DurationVar(&p.timeout, "program-render-timeout", sandbox.DefaultTimeout, "stop a Jsonnet or ytt render after this long (its add-on fails)")
	fl.StringVar(&p.maxMemory, "program-render-max-memory", "1Gi", "stop a Jsonnet or ytt render when its worker process holds this much memory")
	fl.BoolVar(&p.inProcess, "program-render-in-process", false, "render Jsonnet and ytt add-ons in this process, without time or memory bounds (trusted repositories only)")
}

// pool returns the worker pool: regatta's own binary as the worker.
func (p *programWorkerFlags) pool() (*sandbox.Pool, error) {
	if p.inProcess {
		return nil, nil
	}
	mem, err := positiveQuantity("--program-render-max-memory", p.maxMemory)
	if err != nil {
		return nil, err
	}
	if p.timeout <= 0 {
		return nil, usageError("--program-render-timeout must be positive, got %s", p.timeout)
	}
	exe := p.executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	return sandbox.New(sandbox.Options{
		Command:   []string{exe, renderWorkerCommand},
		Timeout:   p.timeout,
		MaxMemory: mem,
	}), nil
}
