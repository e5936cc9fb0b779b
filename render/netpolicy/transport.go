package netpolicy

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Client returns an HTTP client that applies the policy to every request,
// redirects included: a URL under an allow-list prefix goes through an
// ordinary transport; any other is checked and then dialed through a
// transport whose dialer refuses internal addresses, so a name that
// resolves to one at dial time (DNS rebinding) is refused too.
func (p *Policy) Client() *http.Client {
	base := http.DefaultTransport.(*http.Transport)
	strict := base.Clone()
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: refuseInternal}
	strict.DialContext = d.DialContext
	return &http.Client{Transport: &guarded{policy: p, open: base.Clone(), strict: strict}}
}

type guarded struct {
	policy *Policy
	open   http.RoundTripper
	strict http.RoundTripper
}

func (g *guarded) RoundTrip(req *http.Request) (*http.Response, error) {
	raw := req.URL.String()
	if g.policy.allowedByPrefix(raw) {
		return g.open.RoundTrip(req)
	}
	if err := g.policy.Check(req.Context(), raw); err != nil {
		closeBody(req)
		return nil, err
	}
	if proxy, _ := http.ProxyFromEnvironment(req); proxy != nil {
		// The proxy (often a sidecar on loopback) dials the host, which
		// Check has vetted; refusing its address would refuse every fetch.
		return g.open.RoundTrip(req)
	}
	return g.strict.RoundTrip(req)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// refuseInternal runs before each connect with the address being dialed.
func refuseInternal(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, ErrRefused)
	}
	return checkAddr(ap.Addr())
}
