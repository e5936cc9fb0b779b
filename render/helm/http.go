package helm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

func httpStatusText(code int) string { return http.StatusText(code) }

// get fetches u, sending basic auth only when u is on authHost.
func (r *Renderer) get(ctx context.Context, u string, auth basicAuth) ([]byte, error) {
	return r.getLimited(ctx, u, auth, r.maxSize)
}

// getLimited fetches u, failing past max bytes.
func (r *Renderer) getLimited(ctx context.Context, u string, auth basicAuth, max int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if auth.username != "" && sameHost(u, auth.host) {
		req.SetBasicAuth(auth.username, auth.password)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &HTTPError{URL: redact(u), Status: resp.StatusCode}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact(u), err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("GET %s: larger than %d bytes", redact(u), max)
	}
	return data, nil
}

// basicAuth holds credentials and the only host they may be sent to.
type basicAuth struct {
	host, username, password string
}

func authFor(req Request, repoURL string) basicAuth {
	if req.Username == "" {
		return basicAuth{}
	}
	u, err := url.Parse(repoURL)
	if err != nil {
		return basicAuth{}
	}
	return basicAuth{host: u.Host, username: req.Username, password: req.Password}
}

func sameHost(raw, host string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Host == host
}

// redact removes user info from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}
