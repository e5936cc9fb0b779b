// Package sandbox runs repository programs (Jsonnet, ytt) in child
// processes that are killed past a deadline or a memory bound: their
// interpreters cannot be stopped from inside, so a program that loops or
// allocates without end must fail alone, without hanging or exhausting
// the daemon.
//
// A child serves calls of named kinds (Serve with its Handlers). It holds
// no repository: every file a program reads is asked of the parent (the
// Files of the call), which confines and records it. Calls and answers are
// JSON lines on the child's stdin and stdout.
package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// ErrLimit is the failure of a call stopped by a limit of Options.
var ErrLimit = errors.New("stopped at a limit")

// Options bound the calls of a Pool.
type Options struct {
	// Command starts a child: a program that calls Serve on its stdin and
	// stdout (regatta: its own binary with __render-worker).
	Command []string
	// Env is added to the child's environment.
	Env []string
	// Timeout bounds one call's wall time; default 10s.
	Timeout time.Duration
	// MaxMemory bounds the child's resident memory; default 1 GiB.
	MaxMemory int64
	// MaxOutput bounds one answer; default 64 MiB.
	MaxOutput int64
	// MaxWorkers bounds the calls running at once (and the idle children
	// kept); default GOMAXPROCS, at least 2 and at most 4.
	MaxWorkers int
	// IdleTimeout ends a child idle for this long; default 1m.
	IdleTimeout time.Duration
}

// Defaults of Options.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxMemory   = 1 << 30
	DefaultMaxOutput   = 64 << 20
	DefaultIdleTimeout = time.Minute
)

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxWorkers <= 0 {
		o.MaxWorkers = min(max(2, runtime.GOMAXPROCS(0)), 4)
	}
	return o
}

// Files answers a child's reads during one call: op is the handler's
// (such as "file" or "data"), name what it asks for.
type Files interface {
	Read(op, name string) ([]byte, error)
}

// Handler serves one kind of call in the child: req is the call's JSON;
// reads go to the parent. Its result is sent back as JSON.
type Handler func(req json.RawMessage, files Files) (any, error)

// Handlers are the kinds a child serves.
type Handlers map[string]Handler

// frame is one line of the protocol. Parent to child: a call (Kind, Req)
// or the answer to a read (Data, Err, NotExist). Child to parent: a read
// (Op, Name) or the call's result (Done, Result, Err).
type frame struct {
	Kind     string          `json:"kind,omitempty"`
	Req      json.RawMessage `json:"req,omitempty"`
	Op       string          `json:"op,omitempty"`
	Name     string          `json:"name,omitempty"`
	Data     []byte          `json:"data,omitempty"`
	NotExist bool            `json:"notExist,omitempty"`
	Done     bool            `json:"done,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Err      string          `json:"err,omitempty"`
}

// Pool runs calls in children. It is safe for concurrent use.
type Pool struct {
	opts  Options
	slots chan struct{}
	idle  idleList
}

// New returns a Pool; children start on the first call.
func New(o Options) *Pool {
	o = o.withDefaults()
	return &Pool{opts: o, slots: make(chan struct{}, o.MaxWorkers)}
}

// Close ends the idle children. Calls may still run after it.
func (p *Pool) Close() { p.idle.drain() }

// Call runs kind with req in a child and decodes its result into resp.
// A call past a limit fails with an error wrapping ErrLimit and the child
// is ended.
func (p *Pool) Call(ctx context.Context, kind string, req any, files Files, resp any) error {
	js, err := json.Marshal(req)
	if err != nil {
		return err
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.slots }()
	c, err := p.child(ctx)
	if err != nil {
		return err
	}
	result, err := c.call(ctx, p.opts, frame{Kind: kind, Req: js}, files)
	if err != nil {
		c.kill()
		return err
	}
	p.idle.put(c, p.opts)
	return json.Unmarshal(result, resp)
}

// child takes an idle child or starts one.
func (p *Pool) child(ctx context.Context) (*child, error) {
	for {
		c := p.idle.take()
		if c == nil {
			return start(ctx, p.opts)
		}
		select {
		case <-c.exited:
			c.kill()
		default:
			return c, nil
		}
	}
}

// limitError is a call stopped by a limit.
func limitError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrLimit, fmt.Sprintf(format, args...))
}
