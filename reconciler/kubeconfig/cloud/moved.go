package cloud

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
)

// movedError reports whether err, of a request to a cluster's API server,
// says the cluster may have moved (recreated: a new endpoint or CA): the
// server's certificate is not of the CA in use, or its address does not
// resolve or refuses connections. A failure to get a token is not one.
func movedError(err error) bool {
	var (
		tokenErr *Error
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		host     x509.HostnameError
		dns      *net.DNSError
		op       *net.OpError
	)
	switch {
	case errors.As(err, &tokenErr):
		return false
	case errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &dns):
		return true
	case errors.As(err, &op):
		return op.Op == "dial"
	}
	return false
}

// movedWatch calls moved when a request fails as if the cluster had moved.
type movedWatch struct {
	rt    http.RoundTripper
	moved func()
}

func (m *movedWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := m.rt.RoundTrip(req)
	if err != nil && movedError(err) {
		m.moved()
	}
	return resp, err
}

// WrappedRoundTripper lets client-go reach the transport underneath.
func (m *movedWatch) WrappedRoundTripper() http.RoundTripper { return m.rt }
