package apply

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// heldTransport answers each request when the test releases it, and
// counts the requests that reached it.
type heldTransport struct {
	reached atomic.Int32
	release chan error
}

func (h *heldTransport) RoundTrip(*http.Request) (*http.Response, error) {
	h.reached.Add(1)
	if err := <-h.release; err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: http.StatusOK}, nil
}

// burst sends n requests through g at once and returns a channel of their
// errors.
func burst(g *connGate, n int) chan error {
	errs := make(chan error, n)
	for range n {
		go func() {
			req, _ := http.NewRequest(http.MethodGet, "https://cluster.invalid/api", nil)
			_, err := g.RoundTrip(req)
			errs <- err
		}()
	}
	return errs
}

// waitReached polls until n requests reached the transport, then proves
// over a short window that no more do.
func waitReached(t *testing.T, h *heldTransport, n int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.reached.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests reached the transport, want %d", h.reached.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
	for range 50 {
		if got := h.reached.Load(); got != n {
			t.Fatalf("%d requests reached the transport, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// answerAll answers n requests that reached h and waits for their
// callers.
func answerAll(h *heldTransport, errs chan error, n int) {
	for range n {
		h.release <- nil
	}
	for range n {
		<-errs
	}
}

// The first request goes alone; the others follow its answer, together.
func TestConnGateLetsTheFirstRequestGoAlone(t *testing.T) {
	h := &heldTransport{release: make(chan error, 100)}
	g := newConnGate(h)
	errs := burst(g, 10)
	waitReached(t, h, 1)
	h.release <- nil
	waitReached(t, h, 10) // the nine went at once, before any of them was answered
	for range 9 {
		h.release <- nil
	}
	for range 10 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Open now: a second burst goes at once.
	errs = burst(g, 5)
	waitReached(t, h, 15)
	answerAll(h, errs, 5)
}

// A failed first request releases the waiting ones together (each gets its
// own answer), and the next burst is gated again.
func TestConnGateFailureReleasesTheWaitingAndClosesAgain(t *testing.T) {
	h := &heldTransport{release: make(chan error, 100)}
	g := newConnGate(h)
	errs := burst(g, 4)
	waitReached(t, h, 1)
	h.release <- errors.New("dial tcp: connection refused")
	waitReached(t, h, 4)
	for range 3 {
		h.release <- errors.New("dial tcp: connection refused")
	}
	for range 4 {
		if err := <-errs; err == nil {
			t.Fatal("a request succeeded against a refusing transport")
		}
	}
	errs = burst(g, 3)
	waitReached(t, h, 5)
	answerAll(h, errs, 3)
}

// After connGateIdle without requests (the transport's idle connections
// are gone), the next burst is gated again; a burst within the window goes
// at once.
func TestConnGateClosesAfterIdle(t *testing.T) {
	h := &heldTransport{release: make(chan error, 100)}
	g := newConnGate(h)
	var mu sync.Mutex
	now := time.Unix(0, 0)
	g.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	h.release <- nil
	<-burst(g, 1)
	advance(connGateIdle - time.Second)
	errs := burst(g, 3)
	waitReached(t, h, 4) // still open
	answerAll(h, errs, 3)
	advance(connGateIdle + time.Second)
	errs = burst(g, 3)
	waitReached(t, h, 5) // gated: one goes first
	answerAll(h, errs, 3)
}

// A waiting request whose context ends returns at once.
func TestConnGateWaiterHonoursItsContext(t *testing.T) {
	h := &heldTransport{release: make(chan error, 100)}
	g := newConnGate(h)
	first := burst(g, 1)
	waitReached(t, h, 1)
	req, _ := http.NewRequest(http.MethodGet, "https://cluster.invalid/api", nil)
	ctx, cancel := context.WithCancel(req.Context())
	cancel()
	if _, err := g.RoundTrip(req.WithContext(ctx)); err == nil {
		t.Fatal("a cancelled waiting request was sent")
	}
	h.release <- nil
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if h.reached.Load() != 1 {
		t.Fatalf("%d requests reached the transport", h.reached.Load())
	}
}
