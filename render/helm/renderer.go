package helm

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

const (
	defaultIndexTTL     = time.Minute
	defaultMaxSize      = 64 << 20
	defaultFetchTimeout = 2 * time.Minute
)

// Renderer renders charts. It is safe for concurrent use.
type Renderer struct {
	opts    Options
	http    *http.Client
	cache   diskCache
	ttl     time.Duration
	maxSize int64
	now     func() time.Time

	workers *workerPool // nil: chart templates run in this process

	memo    ttlCache           // index.yaml, OCI tags and digests
	flights singleflight.Group // one fetch per URL at a time
}

// New returns a Renderer; see Options for the defaults.
func New(opts Options) *Renderer {
	r := &Renderer{opts: opts, http: opts.HTTPClient, ttl: opts.IndexTTL,
		maxSize: opts.MaxArchiveSize, now: time.Now}
	if r.http == nil {
		r.http = http.DefaultClient
	}
	if r.ttl <= 0 {
		r.ttl = defaultIndexTTL
	}
	if r.maxSize <= 0 {
		r.maxSize = defaultMaxSize
	}
	if r.opts.FetchTimeout <= 0 {
		r.opts.FetchTimeout = defaultFetchTimeout
	}
	r.cache = diskCache{dir: opts.CacheDir}
	if r.cache.dir == "" {
		r.cache.dir = defaultCacheDir()
	}
	r.memo.entries = map[string]ttlEntry{}
	if opts.Worker != nil {
		r.workers = newWorkerPool(*opts.Worker)
	}
	return r
}

// Close stops the idle worker processes. Renders may still run after it
// (they start new workers).
func (r *Renderer) Close() error {
	if r.workers != nil {
		r.workers.close()
	}
	return nil
}

func defaultCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "regatta", "helm")
}

// shared runs fn once per key for all concurrent callers. fn gets a
// context that outlives any one caller (bounded by FetchTimeout), so a
// caller that gives up does not fail the others; it returns on its own
// context.
func (r *Renderer) shared(ctx context.Context, key string, fn func(context.Context) (any, error)) (any, error) {
	ch := r.flights.DoChan(key, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.FetchTimeout)
		defer cancel()
		return fn(fctx)
	})
	select {
	case res := <-ch:
		return res.Val, res.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ttlCache keeps read-only values for a while.
type ttlCache struct {
	mu      sync.Mutex
	entries map[string]ttlEntry
}

type ttlEntry struct {
	value   any
	expires time.Time
}

func (c *ttlCache) get(key string, now time.Time) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || now.After(e.expires) {
		return nil, false
	}
	return e.value, true
}

func (c *ttlCache) put(key string, value any, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[key] = ttlEntry{value: value, expires: expires}
}
