package apply

import (
	"net/http"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// connGateIdle is how long a cluster may go without a request before the
// gate closes again: client-go's transports drop idle connections after
// 90 s, so a burst after such a pause would find none.
const connGateIdle = 90 * time.Second

// connGate lets one request to a cluster go first when the client may have
// no connection yet (new, or idle for connGateIdle), and holds the
// requests that arrive meanwhile until its answer.
//
// Without it, a burst against a fresh client (a pass applying every
// profile at once, 16 objects each) opens a TLS connection per request:
// Go's transport does not know the server speaks HTTP/2 until a handshake
// ends, dials for every request that finds no connection, then keeps one
// and closes the others: 40 requests, 40 TLS handshakes, each costing both
// ends a key exchange and a signature. After the first answer the requests
// share its connection.
//
// The first request's failure opens the gate for those waiting (they go
// at once, each with its own error, rather than one after another) and
// leaves it closed for the next burst.
type connGate struct {
	rt  http.RoundTripper
	now func() time.Time

	mu       sync.Mutex
	open     bool          // a request had an answer
	first    chan struct{} // closed when the request that went first ends
	inFlight int
	lastDone time.Time
}

func newConnGate(rt http.RoundTripper) *connGate {
	return &connGate{rt: rt, now: time.Now}
}

func (g *connGate) RoundTrip(r *http.Request) (*http.Response, error) {
	wait, lead := g.enter()
	switch {
	case lead:
		resp, err := g.rt.RoundTrip(r)
		g.leave(err == nil, true)
		return resp, err
	case wait != nil:
		select {
		case <-wait:
		case <-r.Context().Done():
			g.leave(false, false)
			return nil, r.Context().Err()
		}
	}
	resp, err := g.rt.RoundTrip(r)
	g.leave(err == nil, false)
	return resp, err
}

// enter counts the request in and tells it to go first (lead), to wait
// for the one that went first (wait), or neither: go.
func (g *connGate) enter() (wait chan struct{}, lead bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open && g.inFlight == 0 && g.now().Sub(g.lastDone) > connGateIdle {
		g.open = false
	}
	g.inFlight++
	switch {
	case g.open:
		return nil, false
	case g.first != nil:
		return g.first, false
	}
	g.first = make(chan struct{})
	return nil, true
}

// leave counts a request out; ok is an answer from the server.
func (g *connGate) leave(ok, lead bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	g.lastDone = g.now()
	if ok {
		g.open = true
	}
	if lead {
		close(g.first)
		g.first = nil
	}
}

// CloseIdleConnections closes the transport's idle connections (client-go's
// utilnet.CloseIdleConnectionsFor reaches it through the wrappers around
// the gate); with no request in flight the gate closes too, since the next
// request finds no connection.
func (g *connGate) CloseIdleConnections() {
	g.mu.Lock()
	if g.inFlight == 0 {
		g.open = false
	}
	g.mu.Unlock()
	utilnet.CloseIdleConnectionsFor(g.rt)
}
