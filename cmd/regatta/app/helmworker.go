package app

import (
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/regatta-dev/regatta/render/helm"
)

// helmWorkerCommand is the hidden subcommand regatta starts as its chart
// render worker (see helm.WorkerOptions).
const helmWorkerCommand = "__helm-render"

func newHelmWorkerCommand() *cobra.Command {
	return &cobra.Command{
		Use:    helmWorkerCommand,
		Short:  "render chart templates for a parent regatta process (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return helm.ServeWorker(cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}

// helmWorkerFlags bound chart template execution.
type helmWorkerFlags struct {
	timeout   time.Duration
	idle      time.Duration
	maxMemory string
	maxOutput string
	inProcess bool
	// executable is the regatta binary started as the worker; empty: this
	// process's own (a program that embeds the daemon is not regatta).
	executable string
}

func (h *helmWorkerFlags) register(fl *pflag.FlagSet) {
	fl.DurationVar(&h.timeout, "helm-render-timeout", helm.DefaultWorkerTimeout, "stop a chart's templates after this long (the render of that chart fails)")
	fl.DurationVar(&h.idle, "helm-render-idle-timeout", helm.DefaultWorkerIdleTimeout, "end a chart render worker that rendered nothing for this long (the next render starts one)")
	fl.StringVar(&h.maxMemory, "helm-render-max-memory", "512Mi", "stop a chart's templates when their worker process holds this much memory")
	fl.StringVar(&h.maxOutput, "helm-render-max-output", "64Mi", "stop a chart's templates when the manifests they render pass this size")
	fl.BoolVar(&h.inProcess, "helm-render-in-process", false, "run chart templates in this process, without time or memory bounds (trusted charts only)")
}

// options returns the worker options: regatta's own binary as the worker.
func (h *helmWorkerFlags) options() (*helm.WorkerOptions, error) {
	if h.inProcess {
		return nil, nil
	}
	mem, err := positiveQuantity("--helm-render-max-memory", h.maxMemory)
	if err != nil {
		return nil, err
	}
	out, err := positiveQuantity("--helm-render-max-output", h.maxOutput)
	if err != nil {
		return nil, err
	}
	if h.timeout <= 0 {
		return nil, usageError("--helm-render-timeout must be positive, got %s", h.timeout)
	}
	if h.idle <= 0 {
		return nil, usageError("--helm-render-idle-timeout must be positive, got %s", h.idle)
	}
	exe := h.executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	return &helm.WorkerOptions{
		Command:     []string{exe, helmWorkerCommand},
		Timeout:     h.timeout,
		IdleTimeout: h.idle,
		MaxMemory:   mem,
		MaxOutput:   out,
	}, nil
}

func positiveQuantity(flag, v string) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return 0, usageError("%s must be a size such as 512Mi, got %q", flag, v)
	}
	return q.Value(), nil
}
