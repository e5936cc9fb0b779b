package sandbox

import (
	"fmt"
	"time"
)

// Limit names the bound a call was stopped at.
type Limit int

// The bounds of Options, and the ends of a child the runtime reports.
const (
	LimitTime   Limit = iota + 1 // ran past Options.Timeout
	LimitMemory                  // held more than Options.MaxMemory
	LimitOutput                  // answered more than Options.MaxOutput
	LimitOOM                     // died out of memory (its runtime or the kernel's OOM killer)
	LimitStack                   // died of a goroutine stack past its limit
)

// LimitError is a call stopped at a limit. Callers that word the limits
// for their users switch on Limit; Error is the sandbox's own wording.
type LimitError struct {
	Limit Limit
	msg   string
}

func (e *LimitError) Error() string { return ErrLimit.Error() + ": " + e.msg }

// Unwrap makes a LimitError errors.Is ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

func limitError(l Limit, format string, args ...any) error {
	return &LimitError{Limit: l, msg: fmt.Sprintf(format, args...)}
}

func timeLimit(d time.Duration) error { return limitError(LimitTime, "ran longer than %s", d) }

func memoryLimit(max int64) error {
	return limitError(LimitMemory, "used more than %d MiB of memory", max>>20)
}

func outputLimit(max int64) error {
	return limitError(LimitOutput, "the output passes %d MiB", max>>20)
}
