package access

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// cache keeps review answers per key (a hash of the token, or of the user
// and groups) for a short TTL, so that a page and its live stream are not
// reviewed on every request. A refused token is kept too; a failed review
// is not. It holds at most size answers: when full, the one expiring first
// goes. Concurrent misses of one key share one review.
type cache struct {
	mu      sync.Mutex
	entries map[[32]byte]cached
	size    int
	ttl     time.Duration
	now     func() time.Time
	flight  singleflight.Group
}

type cached struct {
	d       decision
	err     error
	expires time.Time
}

func newCache(size int, ttl time.Duration) *cache {
	return &cache{entries: map[[32]byte]cached{}, size: size, ttl: ttl, now: time.Now}
}

// get returns the answer kept for key, or review's, keeping it.
func (c *cache) get(key [32]byte, review func() (decision, error)) (decision, error) {
	if e, ok := c.lookup(key); ok {
		return e.d, e.err
	}
	v, err, _ := c.flight.Do(string(key[:]), func() (any, error) {
		d, err := review()
		if err == nil || errors.Is(err, errBadCredentials) {
			c.store(key, cached{d: d, err: err, expires: c.now().Add(c.ttl)})
		}
		return d, err
	})
	return v.(decision), err
}

func (c *cache) lookup(key [32]byte) (cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if ok && c.now().Before(e.expires) {
		return e, true
	}
	delete(c.entries, key)
	return cached{}, false
}

func (c *cache) store(key [32]byte, e cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.size {
		c.evict()
	}
	c.entries[key] = e
}

// evict drops the expired answers, or else the one expiring first.
func (c *cache) evict() {
	now := c.now()
	var first [32]byte
	var firstAt time.Time
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
			continue
		}
		if firstAt.IsZero() || e.expires.Before(firstAt) {
			first, firstAt = k, e.expires
		}
	}
	if len(c.entries) >= c.size {
		delete(c.entries, first)
	}
}

// len is how many answers are kept.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
