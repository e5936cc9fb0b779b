package testenv

import (
	"context"
	"testing"
	"time"
)

// PollInterval is how often Eventually and Consistently check.
const PollInterval = 200 * time.Millisecond

// Eventually calls cond until it returns nil and fails the test with cond's
// last error if that does not happen within timeout.
func Eventually(t testing.TB, timeout time.Duration, cond func(ctx context.Context) error) {
	t.Helper()
	if err := Poll(t.Context(), timeout, cond); err != nil {
		t.Fatal(err)
	}
}

// Consistently calls cond for the whole window and fails the test as soon as
// it returns an error: it proves a negative over a bounded time.
func Consistently(t testing.TB, window time.Duration, cond func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(window)
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for {
		if err := cond(t.Context()); err != nil {
			t.Fatalf("within %s: %v", window, err)
		}
		if time.Now().After(deadline) {
			return
		}
		select {
		case <-t.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// Poll calls cond until it returns nil, ctx ends or timeout passes; then it
// returns cond's last error.
func Poll(ctx context.Context, timeout time.Duration, cond func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for {
		err := cond(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return &PollError{Timeout: timeout, Last: err}
		case <-tick.C:
		}
	}
}

// PollError is a condition that did not hold in time.
type PollError struct {
	Timeout time.Duration
	Last    error // the condition's last answer
}

func (e *PollError) Error() string {
	return "not within " + e.Timeout.String() + ": " + e.Last.Error()
}

func (e *PollError) Unwrap() error { return e.Last }

// WaitInterval is how often WaitFor checks: short, because tests also
// report how long a condition took to hold.
const WaitInterval = 50 * time.Millisecond

// WaitFor checks cond every WaitInterval until it holds and returns how
// long that took; it fails the test, naming what, when cond does not hold
// within timeout. It is the poll helper of every test package (Eventually
// and Poll are the forms whose condition explains itself with an error).
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(WaitInterval)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("%s: the test ended first", what)
		case <-tick.C:
		}
	}
	return time.Since(start)
}

// HoldInterval is how often HoldsFor checks: fine, to catch a condition
// that breaks only briefly.
const HoldInterval = 10 * time.Millisecond

// HoldsFor fails the test, naming what, as soon as cond stops holding
// within d: a negative proven over a bounded window (the window is the
// thing measured, so it is a fixed time).
func HoldsFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(HoldInterval)
	defer tick.Stop()
	for end := time.Now().Add(d); time.Now().Before(end); {
		if !cond() {
			t.Fatalf("%s stopped holding within %s", what, d)
		}
		select {
		case <-t.Context().Done():
			return
		case <-tick.C:
		}
	}
}
