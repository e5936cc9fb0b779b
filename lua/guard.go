package lua

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// guard is the context a Lua state runs under, and its instruction hook:
// once a state has a context, gopher-lua's VM loop (mainLoopWithContext)
// calls Done before every instruction. Done counts the instruction, and every
// checkEvery steps looks at the caller's context; the allocation watchdog
// (watch.go) flips overMem from its own goroutine. When any limit is hit, err
// is set for good and Done returns a closed channel, so the VM raises err at
// the next instruction — also inside pcall, so a script cannot swallow it.
//
// Done, Err and tick run on the goroutine of the Lua state only. The guard is
// never handed to context.WithX (which would call Done from another goroutine).
type guard struct {
	parent    context.Context // the caller's context with the call's timeout
	budget    time.Duration   // the time the call had, for messages
	maxSteps  int64
	memLimit  int64
	steps     int64
	nextCheck int64
	overMem   atomic.Bool
	err       error
	done      chan struct{} // nil until err is set, then closed
}

const checkEvery = 256

func newGuard(parent context.Context, start time.Time, opts Options) *guard {
	budget := opts.Timeout
	if d, ok := parent.Deadline(); ok {
		budget = d.Sub(start)
	}
	return &guard{parent: parent, budget: budget, maxSteps: opts.MaxInstructions, memLimit: opts.MemoryLimit}
}

func (g *guard) Deadline() (time.Time, bool) { return g.parent.Deadline() }
func (g *guard) Value(key any) any           { return g.parent.Value(key) }
func (g *guard) Err() error                  { return g.err }

// Done is the per-instruction hook.
func (g *guard) Done() <-chan struct{} {
	if g.err == nil {
		_ = g.tick(1)
	}
	return g.done
}

// tick charges n steps and returns the terminal error once a limit is hit.
func (g *guard) tick(n int64) error {
	if g.err != nil {
		return g.err
	}
	g.steps += n
	switch {
	case g.overMem.Load():
		return g.fail(fmt.Errorf("%w: the call allocated more than %s", ErrMemoryLimit, formatBytes(g.memLimit)))
	case g.maxSteps > 0 && g.steps > g.maxSteps:
		return g.fail(fmt.Errorf("%w: more than %d steps", ErrInstructionLimit, g.maxSteps))
	case g.steps >= g.nextCheck:
		g.nextCheck = g.steps + checkEvery
		if err := g.parent.Err(); err != nil {
			return g.fail(g.contextError(err))
		}
	}
	return nil
}

func (g *guard) contextError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("script did not finish within %v: %w", g.budget.Round(time.Millisecond), err)
	}
	return fmt.Errorf("script canceled: %w", err)
}

// fail records err as the end of the call and returns it.
func (g *guard) fail(err error) error {
	if g.err == nil {
		g.err = err
		g.done = make(chan struct{})
		close(g.done)
	}
	return g.err
}

// formatBytes renders n as "4 MiB" or "512 B".
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	s := fmt.Sprintf("%.1f", v)
	if v == float64(int64(v)) {
		s = fmt.Sprintf("%d", int64(v))
	}
	return s + " " + string("KMGTPE"[exp]) + "iB"
}
