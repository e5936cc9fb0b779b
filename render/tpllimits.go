package render

import (
	"context"
	"fmt"
	"time"

	"github.com/regatta-dev/regatta/render/helm"
)

// ErrTemplateLimit is the failure of a template execution that passed one
// of its TemplateLimits, or of a template (chart templates included) that
// would pass them whatever the data.
var ErrTemplateLimit = helm.ErrTemplateLimit

// TemplateLimits bound one execution of a template (one file or one
// field): regatta's templates run repository code, so a loop or a function
// call must not hang the daemon or exhaust its memory. Like the Lua
// sandbox's limits, each is checked before the work it bounds: a loop
// iteration or a function call past MaxSteps or Timeout stops, and
// functions whose output size follows an argument (repeat, until, seq,
// indent, printf widths, ...) check the size before allocating.
type TemplateLimits struct {
	// Timeout bounds the wall time of one execution.
	Timeout time.Duration
	// MaxSteps bounds the work of one execution: each pass through a
	// list of actions (a loop iteration, a branch, a template call) costs
	// its length, each function call 1 plus its result's size / 64.
	MaxSteps int64
	// MaxOutput bounds the bytes one execution writes.
	MaxOutput int64
	// MaxValue bounds the size of any one value a function builds (a
	// string's bytes, a list's or map's elements, counted in full even
	// when shared).
	MaxValue int64
}

// DefaultTemplateLimits are generous for real templates (a few thousand
// steps, kilobytes of output) and stop a hostile one in about a second.
func DefaultTemplateLimits() TemplateLimits {
	return TemplateLimits{
		Timeout:   2 * time.Second,
		MaxSteps:  5_000_000,
		MaxOutput: 16 << 20,
		MaxValue:  4 << 20,
	}
}

// withDefaults fills zero fields from DefaultTemplateLimits.
func (l TemplateLimits) withDefaults() TemplateLimits {
	d := DefaultTemplateLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = d.MaxSteps
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = d.MaxOutput
	}
	if l.MaxValue <= 0 {
		l.MaxValue = d.MaxValue
	}
	return l
}

// budget is the state of one execution against its limits. The first
// limit error sticks: a template cannot continue past it.
type budget struct {
	ctx      context.Context
	lim      TemplateLimits
	deadline time.Time
	steps    int64
	out      int64
	calls    int
	err      error
}

func (b *budget) reset(ctx context.Context, lim TemplateLimits) {
	*b = budget{ctx: ctx, lim: lim, deadline: time.Now().Add(lim.Timeout)}
}

// charge adds n steps and checks the step limit and, every few calls,
// the deadline.
func (b *budget) charge(n int64) error {
	if b.err != nil {
		return b.err
	}
	b.steps += n
	if b.out > b.lim.MaxOutput {
		return b.fail(b.outputError())
	}
	if b.steps > b.lim.MaxSteps || b.steps < 0 {
		return b.fail(fmt.Errorf("%w: more than %d steps (a loop or recursion too long)", ErrTemplateLimit, b.lim.MaxSteps))
	}
	b.calls++
	if b.calls&15 != 0 {
		return nil
	}
	if err := b.ctx.Err(); err != nil {
		return b.fail(err)
	}
	if time.Now().After(b.deadline) {
		return b.fail(fmt.Errorf("%w: ran longer than %s", ErrTemplateLimit, b.lim.Timeout))
	}
	return nil
}

// checkSize fails when what would build a value of n bytes (or elements)
// past MaxValue. n < 0 means an overflowing estimate.
func (b *budget) checkSize(what string, n int64) error {
	if n >= 0 && n <= b.lim.MaxValue {
		return nil
	}
	size := "more than 8 EiB"
	if n >= 0 {
		size = fmt.Sprintf("%d bytes", n)
	}
	return b.fail(fmt.Errorf("%w: %s would build a value of %s; the limit is %d bytes", ErrTemplateLimit, what, size, b.lim.MaxValue))
}

// wrote counts n bytes of output. Past MaxOutput, the next step fails
// (at an action or loop with a line number, unlike a failing write);
// past twice MaxOutput, the write itself does.
func (b *budget) wrote(n int) error {
	b.out += int64(n)
	if b.out > 2*b.lim.MaxOutput {
		return b.fail(b.outputError())
	}
	return b.err
}

func (b *budget) outputError() error {
	return fmt.Errorf("%w: output larger than %d bytes", ErrTemplateLimit, b.lim.MaxOutput)
}

func (b *budget) fail(err error) error {
	if b.err == nil {
		b.err = err
	}
	return b.err
}

// limitedWriter is an execution's output, bounded by its budget.
type limitedWriter struct {
	b   *budget
	buf []byte
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if err := w.b.wrote(len(p)); err != nil {
		return 0, err
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// mulSize multiplies sizes, returning -1 on overflow.
func mulSize(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	if a != 0 && b > (1<<62)/a {
		return -1
	}
	return a * b
}
