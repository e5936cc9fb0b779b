package helm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// WorkerEnv is set in a worker's environment (to "1"), so that a test
// binary can serve as the worker: its TestMain calls ServeWorker when the
// variable is set.
const WorkerEnv = "REGATTA_HELM_WORKER"

// ServeWorker answers render requests from r on w until r ends: the
// worker side of WorkerOptions. Each render runs Helm's engine; a render
// that outlives twice its timeout ends the process (exit code 3), in
// case the parent that should kill it is gone.
func ServeWorker(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, 64<<10)
	out := bufio.NewWriterSize(w, 64<<10)
	// Say when this process is up, so that its start does not count
	// against a render's timeout.
	if err := writeFrame(out, workerHello{Ready: true}); err != nil {
		return fmt.Errorf("helm worker: %w", err)
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("helm worker: %w", err)
	}
	for {
		var req workerRequest
		if err := readFrame(in, 0, &req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("helm worker: read request: %w", err)
		}
		resp := serveOne(&req)
		if err := writeFrame(out, resp); err != nil {
			return fmt.Errorf("helm worker: write response: %w", err)
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("helm worker: write response: %w", err)
		}
	}
}

// workerHello is a worker's first frame.
type workerHello struct {
	Ready bool `json:"ready"`
}

func serveOne(req *workerRequest) *workerResponse {
	if req.Chart == nil || req.Chart.Chart == nil || req.Chart.Chart.Metadata == nil {
		return &workerResponse{Err: &wireError{Msg: "helm worker: request without a chart"}}
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultWorkerTimeout
	}
	watchdog := time.AfterFunc(2*timeout, func() { os.Exit(3) })
	defer watchdog.Stop()
	c := req.Chart.chart()
	out, err := renderFiles(c, req.Request, req.Schemas)
	if err == nil {
		err = checkOutput(c.Name(), out, req.MaxOutput)
	}
	if err != nil {
		return &workerResponse{Err: wireErrorOf(err)}
	}
	out.toRaw()
	return &workerResponse{Rendered: out}
}

// checkOutput fails rendered files past max bytes in all, naming the
// largest file.
func checkOutput(chartName string, out *rendered, max int64) error {
	var total, largest int64
	name := ""
	for n, f := range out.Files {
		total += int64(len(f))
		if int64(len(f)) > largest {
			largest, name = int64(len(f)), n
		}
	}
	if max <= 0 || total <= max {
		return nil
	}
	return &TemplateError{
		File: chartRelative(chartName, name),
		Msg:  fmt.Sprintf("%s: the rendered manifests pass %d MiB (this file: %d bytes)", ErrTemplateLimit, max>>20, largest),
		Err:  ErrTemplateLimit,
	}
}
