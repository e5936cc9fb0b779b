package helm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/regatta-dev/regatta/render/sandbox"
)

// WorkerOptions run chart templates in child processes, so that a chart
// whose templates loop or allocate without bound (Helm's engine cannot be
// stopped while it runs) fails alone: a worker past Timeout, MaxMemory or
// MaxOutput is killed and the render fails with ErrTemplateLimit. Workers
// are reused between renders; one that is killed is replaced. The workers
// are a render/sandbox pool, whose calls are this package's renders.
type WorkerOptions struct {
	// Command starts a worker: a program that serves Handlers (as
	// ServeWorker does) on its stdin and stdout (regatta: its own binary
	// with __helm-render).
	Command []string
	// Env is added to the worker's environment.
	Env []string
	// Timeout bounds one render's wall time in the worker; default 2s.
	Timeout time.Duration
	// MaxMemory bounds the worker's resident memory (Linux: VmRSS);
	// default 512 MiB.
	MaxMemory int64
	// MaxOutput bounds the rendered files of one render; default 64 MiB.
	MaxOutput int64
	// MaxWorkers and IdleTimeout are sandbox.Options': the renders
	// running at once and the idle workers kept (default GOMAXPROCS, at
	// least 2 and at most 4), and how long a worker that rendered nothing
	// lives, so a daemon between commits holds none (default 1m).
	MaxWorkers  int
	IdleTimeout time.Duration
}

// Default worker limits (the rest are sandbox.Options' defaults).
const (
	DefaultWorkerTimeout     = 2 * time.Second
	DefaultWorkerMaxMemory   = 512 << 20
	DefaultWorkerMaxOutput   = 64 << 20
	DefaultWorkerIdleTimeout = sandbox.DefaultIdleTimeout
)

func (o WorkerOptions) withDefaults() WorkerOptions {
	if o.Timeout <= 0 {
		o.Timeout = DefaultWorkerTimeout
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = DefaultWorkerMaxMemory
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultWorkerMaxOutput
	}
	return o
}

// renderKind is the sandbox call that renders a chart (see Handlers).
const renderKind = "helm"

// workerPool runs renders in a sandbox pool.
type workerPool struct {
	opts WorkerOptions
	pool *sandbox.Pool
}

func newWorkerPool(o WorkerOptions) *workerPool {
	o = o.withDefaults()
	return &workerPool{opts: o, pool: sandbox.New(sandbox.Options{
		Name:    "helm worker",
		Command: o.Command,
		Env:     o.Env,
		Timeout: o.Timeout,
		// The worker checks MaxOutput on the rendered files (naming the
		// largest); the answer holds them as base64 in JSON, and this
		// bound only keeps a worker from making this process hold more.
		MaxOutput:   2*o.MaxOutput + 1<<20,
		MaxMemory:   o.MaxMemory,
		MaxWorkers:  o.MaxWorkers,
		IdleTimeout: o.IdleTimeout,
	})}
}

// render runs one render in a worker and maps a kill to a limit error.
func (p *workerPool) render(ctx context.Context, c *chart.Chart, req Request, schemas recordedDocs) (*rendered, error) {
	req.ChartFS, req.Username, req.Password = nil, "", ""
	var resp workerResponse
	err := p.pool.Call(ctx, renderKind, &workerRequest{
		Chart:     toWire(c),
		Request:   req,
		Schemas:   schemas,
		MaxOutput: p.opts.MaxOutput,
	}, nil, &resp)
	if err != nil {
		return nil, p.failure(c, err)
	}
	if resp.Err != nil {
		return nil, resp.Err.err()
	}
	if resp.Rendered == nil {
		return nil, errors.New("helm worker: an answer without files")
	}
	resp.Rendered.fromRaw()
	return resp.Rendered, nil
}

// close stops the idle workers.
func (p *workerPool) close() { p.pool.Close() }

// failure turns a worker's end into the render's error.
func (p *workerPool) failure(c *chart.Chart, err error) error {
	var le *sandbox.LimitError
	if !errors.As(err, &le) {
		return err
	}
	te := &TemplateError{
		File: "Chart.yaml",
		Msg:  fmt.Sprintf("%s: %s", ErrTemplateLimit, p.limitMessage(le.Limit)),
		Err:  ErrTemplateLimit,
	}
	if s, ok := suspect(c); ok {
		te.File, te.Line = s.file, s.line
		te.Msg += "; the likely cause is the data-driven " + s.what + " here"
	}
	return te
}

// limitMessage words a limit for chart authors.
func (p *workerPool) limitMessage(l sandbox.Limit) string {
	switch l {
	case sandbox.LimitTime:
		return fmt.Sprintf("rendering the chart's templates took longer than %s (stopped)", p.opts.Timeout)
	case sandbox.LimitMemory:
		return fmt.Sprintf("rendering the chart's templates used more than %d MiB of memory (stopped)", p.opts.MaxMemory>>20)
	case sandbox.LimitOutput:
		return fmt.Sprintf("the rendered manifests pass %d MiB (stopped)", p.opts.MaxOutput>>20)
	case sandbox.LimitStack:
		return "rendering the chart's templates passed the stack limit (the worker was ended)"
	default:
		return "rendering the chart's templates ran out of memory (the worker was ended)"
	}
}
