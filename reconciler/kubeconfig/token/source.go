// Package token keeps a cluster's short-lived bearer token fresh: a Source
// caches the token a Fetcher gets (from a cloud's token service, or a
// TokenRequest) and fetches the next one before the current one expires,
// so no request goes out with an expired token. Config builds the REST
// config that sends it. Tokens never appear in errors or logs.
package token

import (
	"context"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// Fetcher gets a new token. current is the token in use, or nil (a
// TokenRequest authenticates with it). Forget drops whatever the fetcher
// caches of its identity, after the API server refused a token.
type Fetcher interface {
	Fetch(ctx context.Context, current *oauth2.Token) (*oauth2.Token, error)
	Forget()
}

// MaxRenewBefore bounds how long before its expiry a token is renewed: a
// quarter of its lifetime, at most this.
const MaxRenewBefore = 5 * time.Minute

// fetchTimeout bounds one fetch.
const fetchTimeout = 30 * time.Second

// Source caches a token and renews it before it expires. Safe for
// concurrent use; one fetch at a time.
type Source struct {
	ctx   context.Context
	fetch Fetcher
	now   func() time.Time

	mu      sync.Mutex
	tok     *oauth2.Token
	got     time.Time // when tok was fetched
	renewAt time.Time
}

// NewSource returns a Source whose fetches are bounded by ctx (the
// daemon's lifetime), starting with initial (may be nil).
func NewSource(ctx context.Context, f Fetcher, initial *oauth2.Token) *Source {
	s := &Source{ctx: ctx, fetch: f, now: time.Now}
	if initial != nil {
		s.set(initial)
	}
	return s
}

// Token returns the cached token, fetching a new one when there is none or
// the renewal time has come. A failed renewal keeps a token that is still
// valid (the next request tries again); once it has expired, the error is
// returned.
func (s *Source) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.tok != nil && now.Before(s.renewAt) {
		return s.tok, nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, fetchTimeout)
	defer cancel()
	tok, err := s.fetch.Fetch(ctx, s.tok)
	if err != nil {
		if s.tok != nil && now.Before(s.tok.Expiry) {
			return s.tok, nil
		}
		return nil, err
	}
	s.set(tok)
	return tok, nil
}

// set caches tok; the caller holds mu (or owns s).
func (s *Source) set(tok *oauth2.Token) {
	s.tok, s.got = tok, s.now()
	s.renewAt = RenewAt(s.got, tok.Expiry)
}

// RenewAt is when a token fetched at got and expiring at expiry is
// renewed: a quarter of its lifetime (at most MaxRenewBefore) before it
// expires. A token without expiry is never renewed.
func RenewAt(got, expiry time.Time) time.Time {
	if expiry.IsZero() {
		return time.Unix(1<<62, 0)
	}
	before := min(expiry.Sub(got)/4, MaxRenewBefore)
	return expiry.Add(-before)
}

// ResetTokenOlderThan drops a token fetched before t, and what the fetcher
// caches of its identity: the API server refused it (401).
func (s *Source) ResetTokenOlderThan(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok != nil && s.got.Before(t) {
		s.tok = nil
		s.fetch.Forget()
	}
}

// Config returns a REST config for the API server at host (CA data in
// PEM) that authenticates with src's tokens.
func Config(host string, caData []byte, src *Source) *rest.Config {
	cfg := &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{CAData: caData}}
	cfg.Wrap(transport.ResettableTokenSourceWrapTransport(src))
	return cfg
}
