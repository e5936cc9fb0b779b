package ytt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/regatta-dev/regatta/render/sandbox"
)

// Run renders req in a worker of pool, or in this process when pool is
// nil (unbounded: a template that loops is not stopped).
func Run(ctx context.Context, pool *sandbox.Pool, req Request) (string, error) {
	if pool == nil {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		return Render(req)
	}
	var a answer
	if err := pool.Call(ctx, Kind, req, noFiles{}, &a); err != nil {
		return "", fmt.Errorf("ytt: %w", err)
	}
	if a.Error != nil {
		return "", a.Error
	}
	return a.Output, nil
}

// Handler serves Kind in a worker (see sandbox.Serve).
func Handler(js json.RawMessage, _ sandbox.Files) (any, error) {
	var req Request
	if err := json.Unmarshal(js, &req); err != nil {
		return nil, err
	}
	out, err := Render(req)
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			e = &Error{Msg: err.Error()}
		}
		return answer{Error: e}, nil
	}
	return answer{Output: out}, nil
}

// noFiles: a ytt render is given all its files up front.
type noFiles struct{}

func (noFiles) Read(op, name string) ([]byte, error) {
	return nil, errors.New("ytt reads no files through the parent")
}
