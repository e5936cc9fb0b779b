package helm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"helm.sh/helm/v3/pkg/chart"
)

// WorkerOptions run chart templates in child processes, so that a chart
// whose templates loop or allocate without bound (Helm's engine cannot be
// stopped while it runs) fails alone: a worker past Timeout, MaxMemory or
// MaxOutput is killed and the render fails with ErrTemplateLimit. Workers
// are reused between renders; one that is killed is replaced.
type WorkerOptions struct {
	// Command starts a worker: a program that calls ServeWorker on its
	// stdin and stdout (regatta: its own binary with __helm-render).
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
	// MaxWorkers bounds the renders running at once; default GOMAXPROCS,
	// at least 2 and at most 4 (each worker may grow to MaxMemory). Idle
	// workers are kept up to this number.
	MaxWorkers int
	// IdleTimeout ends a worker that rendered nothing for this long, so a
	// daemon between commits holds no worker; default 1m.
	IdleTimeout time.Duration
}

// Default worker limits.
const (
	DefaultWorkerTimeout     = 2 * time.Second
	DefaultWorkerMaxMemory   = 512 << 20
	DefaultWorkerMaxOutput   = 64 << 20
	DefaultWorkerIdleTimeout = time.Minute
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
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultWorkerIdleTimeout
	}
	if o.MaxWorkers <= 0 {
		o.MaxWorkers = min(max(2, runtime.GOMAXPROCS(0)), 4)
	}
	return o
}

// workerPool hands out workers, at most MaxWorkers at a time.
type workerPool struct {
	opts  WorkerOptions
	slots chan struct{}
	mu    sync.Mutex
	idle  []*worker
}

func newWorkerPool(o WorkerOptions) *workerPool {
	o = o.withDefaults()
	return &workerPool{opts: o, slots: make(chan struct{}, o.MaxWorkers)}
}

// render runs one render in a worker and maps a kill to a limit error.
func (p *workerPool) render(ctx context.Context, c *chart.Chart, req Request, schemas recordedDocs) (*rendered, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-p.slots }()
	w, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	req.ChartFS, req.Username, req.Password = nil, "", ""
	resp, err := w.run(ctx, p.opts, &workerRequest{
		Chart:     toWire(c),
		Request:   req,
		Schemas:   schemas,
		Timeout:   p.opts.Timeout,
		MaxOutput: p.opts.MaxOutput,
	})
	if err != nil {
		w.kill()
		return nil, p.failure(c, err)
	}
	p.put(w)
	if resp.Err != nil {
		return nil, resp.Err.err()
	}
	if resp.Rendered == nil {
		return nil, errors.New("helm worker: an answer without files")
	}
	resp.Rendered.fromRaw()
	return resp.Rendered, nil
}

func (p *workerPool) get(ctx context.Context) (*worker, error) {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			return startWorker(ctx, p.opts)
		}
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		w.idleTimer.Stop() // expire finds it gone from idle if it fired
		p.mu.Unlock()
		select {
		case <-w.exited: // ended while idle (killed from outside)
			w.kill()
		default:
			return w, nil
		}
	}
}

// put keeps a worker for the next render unless it holds much memory.
func (p *workerPool) put(w *worker) {
	if rss, ok := residentMemory(w.cmd.Process.Pid); ok && rss > p.opts.MaxMemory/2 {
		w.kill()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) >= p.opts.MaxWorkers {
		go w.kill()
		return
	}
	p.idle = append(p.idle, w)
	w.idleTimer = time.AfterFunc(p.opts.IdleTimeout, func() { p.expire(w) })
}

// expire ends a worker still idle when its idle timeout fires.
func (p *workerPool) expire(w *worker) {
	p.mu.Lock()
	i := slices.Index(p.idle, w)
	if i >= 0 {
		p.idle = slices.Delete(p.idle, i, i+1)
	}
	p.mu.Unlock()
	if i >= 0 {
		w.kill()
	}
}

// close stops the idle workers.
func (p *workerPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, w := range idle {
		w.idleTimer.Stop()
		w.kill()
	}
}

// failure turns a worker's end into the render's error.
func (p *workerPool) failure(c *chart.Chart, err error) error {
	var le *limitError
	if !errors.As(err, &le) {
		return err
	}
	te := &TemplateError{
		File: "Chart.yaml",
		Msg:  fmt.Sprintf("%s: %s", ErrTemplateLimit, le.what),
		Err:  ErrTemplateLimit,
	}
	if s, ok := suspect(c); ok {
		te.File, te.Line = s.file, s.line
		te.Msg += "; the likely cause is the data-driven " + s.what + " here"
	}
	return te
}

// limitError: the worker was stopped by one of the limits.
type limitError struct{ what string }

func (e *limitError) Error() string { return e.what }

// worker is one child process serving renders.
type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *tailBuffer
	exited chan struct{}
	once   sync.Once
	// idleTimer ends the worker after IdleTimeout in the idle list; set and
	// stopped with the pool's lock held.
	idleTimer *time.Timer
}

// workerStartTimeout bounds a worker's start, up to its first frame.
const workerStartTimeout = time.Minute

func startWorker(ctx context.Context, o WorkerOptions) (*worker, error) {
	if len(o.Command) == 0 {
		return nil, errors.New("helm worker: no command")
	}
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	cmd.Env = append(append(workerEnviron(), o.Env...), "GOMAXPROCS=2",
		"GOMEMLIMIT="+strconv.FormatInt(o.MaxMemory/4*3, 10))
	w := &worker{cmd: cmd, stderr: &tailBuffer{max: 4 << 10}, exited: make(chan struct{})}
	cmd.Stderr = w.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("helm worker: %w", err)
	}
	w.stdin, w.stdout = stdin, bufio.NewReaderSize(stdout, 64<<10)
	go func() { _ = cmd.Wait(); close(w.exited) }()
	if err := w.awaitHello(ctx); err != nil {
		w.kill()
		return nil, err
	}
	return w, nil
}

// awaitHello waits for the worker's first frame.
func (w *worker) awaitHello(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		var hello workerHello
		err := readFrame(w.stdout, 1<<10, &hello)
		if err == nil && !hello.Ready {
			err = errors.New("not ready")
		}
		done <- err
	}()
	timer := time.NewTimer(workerStartTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return w.startError(err)
		}
		return nil
	case <-timer.C:
		return fmt.Errorf("helm worker: not started after %s", workerStartTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *worker) startError(err error) error {
	w.kill()
	if msg := w.stderr.String(); msg != "" {
		return fmt.Errorf("helm worker %s: %v: %s", w.cmd.Path, err, keyLine(msg))
	}
	return fmt.Errorf("helm worker %s: %w", w.cmd.Path, err)
}

// workerEnvKeys are the variables a worker inherits: it needs none of the
// rest, which may hold credentials (templates cannot read the environment
// in Helm, but a worker has no business holding them either).
var workerEnvKeys = []string{"PATH", "TMPDIR", "GOCOVERDIR", "GODEBUG", "GOTRACEBACK"}

func workerEnviron() []string {
	var env []string
	for _, k := range workerEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// run sends one request and waits for its answer within the limits.
func (w *worker) run(ctx context.Context, o WorkerOptions, req *workerRequest) (*workerResponse, error) {
	done := make(chan error, 1)
	var resp workerResponse
	go func() {
		if err := writeFrame(w.stdin, req); err != nil {
			done <- err
			return
		}
		// The worker checks MaxOutput on the rendered files; JSON
		// escaping at most doubles them.
		done <- readFrame(w.stdout, 2*o.MaxOutput+1<<20, &resp)
	}()
	timer := time.NewTimer(o.Timeout)
	defer timer.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return &resp, w.readError(err, o)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return nil, &limitError{what: fmt.Sprintf("rendering the chart's templates took longer than %s (stopped)", o.Timeout)}
		case <-tick.C:
			if rss, ok := residentMemory(w.cmd.Process.Pid); ok && rss > o.MaxMemory {
				return nil, &limitError{what: fmt.Sprintf("rendering the chart's templates used more than %d MiB of memory (stopped)", o.MaxMemory>>20)}
			}
		}
	}
}

func (w *worker) readError(err error, o WorkerOptions) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errFrameTooLarge):
		return &limitError{what: fmt.Sprintf("the rendered manifests pass %d MiB (stopped)", o.MaxOutput>>20)}
	}
	select { // it is ending: let it, to read how
	case <-w.exited:
	case <-time.After(time.Second):
	}
	w.kill()
	msg := w.stderr.String()
	if strings.Contains(msg, "out of memory") || w.killedBySignal() {
		return &limitError{what: "rendering the chart's templates ran out of memory (the worker was ended)"}
	}
	if msg != "" {
		return fmt.Errorf("helm worker: %v: %s", err, keyLine(msg))
	}
	return fmt.Errorf("helm worker: %w", err)
}

// killedBySignal says whether the worker ended on SIGKILL it did not get
// from us while it answered: the kernel's OOM killer, mostly.
func (w *worker) killedBySignal() bool {
	ws, ok := w.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// kill ends the worker and waits for it.
func (w *worker) kill() {
	w.once.Do(func() {
		_ = w.stdin.Close()
		_ = w.cmd.Process.Kill()
		<-w.exited
	})
}

// residentMemory reads VmRSS of a process from /proc (Linux only).
func residentMemory(pid int) (int64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = b.buf[over:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(bytes.TrimSpace(b.buf))
}

// keyLine picks the line of a worker's stderr that says why it ended: a
// Go runtime's "fatal error:" or "panic:", else the last line.
func keyLine(s string) string {
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") {
			return l
		}
	}
	return lines[len(lines)-1]
}
