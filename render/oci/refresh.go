package oci

import (
	"context"
	"errors"
	"strings"
	"time"
)

// flight is one resolution under way, which concurrent resolutions of the
// same selection wait for instead of asking again.
type flight struct {
	done    chan struct{}
	waiters int // callers waiting for it (under Client.mu)
	digest  string
	err     error
}

// resolveShared asks the registry for key's digest, or waits for the
// request already under way, and remembers a success. A caller whose
// request was cancelled by its own context does not fail the others: they
// ask again.
func (c *Client) resolveShared(ctx context.Context, key, url string, sel Selector, cr Credentials) (string, error) {
	for {
		c.mu.Lock()
		f, joined := c.flights[key]
		if joined {
			f.waiters++
		} else {
			f = &flight{done: make(chan struct{})}
			c.flights[key] = f
		}
		c.mu.Unlock()
		if !joined {
			return c.fly(ctx, f, key, url, sel, cr)
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if !cancelled(f.err) {
			return f.digest, f.err
		}
	}
}

// fly makes the request of flight f and lands it.
func (c *Client) fly(ctx context.Context, f *flight, key, url string, sel Selector, cr Credentials) (string, error) {
	f.digest, f.err = c.ask(ctx, url, sel, cr)
	if f.err != nil && ctx.Err() != nil {
		f.err = errors.Join(f.err, ctx.Err()) // the waiting ones ask again
	}
	c.mu.Lock()
	delete(c.flights, key)
	if f.err == nil {
		c.resolved[key] = resolution{digest: f.digest, at: time.Now(), url: url, sel: sel, cr: cr}
	}
	c.mu.Unlock()
	close(f.done)
	return f.digest, f.err
}

func cancelled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Refresh asks the registry again, once, for url's tag or semver range,
// as its interval comes due: every resolution of it made before (one per
// credentials) is replaced by the registry's answer, so the passes that
// follow read the new digest from memory. It reports whether a digest
// moved; true as well when the artifact was never resolved here (the
// passes must resolve it) or the registry failed (its resolutions are
// dropped, so the passes ask again and report the failure).
func (c *Client) Refresh(ctx context.Context, url, tag, semver string) (bool, error) {
	prefix := artifactPrefix(url, tag, semver)
	c.mu.Lock()
	var before []resolution
	for k, r := range c.resolved {
		if strings.HasPrefix(k, prefix) {
			before = append(before, r)
		}
	}
	c.mu.Unlock()
	moved := len(before) == 0
	var errs []error
	for _, r := range before {
		key := resolutionKey(r.url, r.sel, r.cr)
		d, err := c.resolveShared(ctx, key, r.url, r.sel, r.cr)
		if err != nil {
			c.mu.Lock()
			delete(c.resolved, key)
			c.mu.Unlock()
			errs = append(errs, err)
		}
		moved = moved || err != nil || d != r.digest
	}
	return moved, errors.Join(errs...)
}
