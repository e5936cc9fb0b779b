package helm

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/regatta-dev/regatta/render/sandbox"
)

// WorkerEnv is set in a worker's environment (to "1"), so that a test
// binary can serve as the worker: its TestMain calls ServeWorker when the
// variable is set.
const WorkerEnv = "REGATTA_HELM_WORKER"

// ServeWorker answers render requests from r on w until r ends: the
// worker side of WorkerOptions (sandbox.Serve with Handlers). A render
// that outlives twice its timeout ends the process (exit code 3), in case
// the parent that should kill it is gone.
func ServeWorker(r io.Reader, w io.Writer) error {
	return sandbox.Serve(r, w, Handlers(), 0)
}

// Handlers are the sandbox calls a chart render worker serves.
func Handlers() sandbox.Handlers {
	return sandbox.Handlers{renderKind: serveRender}
}

// serveRender runs Helm's engine for one request; a render's error is
// part of its answer.
func serveRender(js json.RawMessage, _ sandbox.Files) (any, error) {
	var req workerRequest
	if err := json.Unmarshal(js, &req); err != nil {
		return nil, fmt.Errorf("helm worker: read request: %w", err)
	}
	return serveOne(&req), nil
}

func serveOne(req *workerRequest) *workerResponse {
	if req.Chart == nil || req.Chart.Chart == nil || req.Chart.Chart.Metadata == nil {
		return &workerResponse{Err: &wireError{Msg: "helm worker: request without a chart"}}
	}
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
