package jsonnet

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/regatta-dev/regatta/render/sandbox"
)

// Kind names evaluations in a sandbox worker.
const Kind = "jsonnet"

// Read operations a worker asks of its parent.
const (
	opFile = "file"
	opData = "data"
)

// answer is an evaluation's result across the sandbox.
type answer struct {
	Output string `json:"output"`
	Error  *Error `json:"error,omitempty"`
}

// Run evaluates req in a worker of pool, or in this process when pool is
// nil (bounded by MaxStack only: a program that loops is not stopped).
func Run(ctx context.Context, pool *sandbox.Pool, req Request, rd Reader) (string, error) {
	if pool == nil {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		return Evaluate(req, rd)
	}
	var a answer
	if err := pool.Call(ctx, Kind, req, parentFiles{rd}, &a); err != nil {
		return "", &Error{File: req.Main, Msg: fmt.Sprintf("evaluation %v", err), Err: err}
	}
	if a.Error != nil {
		return "", a.Error
	}
	return a.Output, nil
}

// Handler serves Kind in a worker (see sandbox.Serve).
func Handler(js json.RawMessage, files sandbox.Files) (any, error) {
	var req Request
	if err := json.Unmarshal(js, &req); err != nil {
		return nil, err
	}
	out, err := Evaluate(req, workerReader{files})
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			e = &Error{File: req.Main, Msg: err.Error()}
		}
		return answer{Error: e}, nil
	}
	return answer{Output: out}, nil
}

// parentFiles answers a worker's reads from the Reader.
type parentFiles struct{ rd Reader }

func (p parentFiles) Read(op, name string) ([]byte, error) {
	switch op {
	case opFile:
		return p.rd.ReadFile(name)
	case opData:
		return p.rd.Data(name)
	}
	return nil, fmt.Errorf("unknown read %q", op)
}

// workerReader reads through the parent.
type workerReader struct{ f sandbox.Files }

func (w workerReader) ReadFile(p string) ([]byte, error) { return w.f.Read(opFile, p) }

func (w workerReader) Data(name string) ([]byte, error) { return w.f.Read(opData, name) }
