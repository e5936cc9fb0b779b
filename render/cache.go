package render

import (
	"container/list"
	"context"
	"errors"
	"github.com/regatta-dev/regatta/render/sandbox"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// cache holds rendered results by key, the memo entries that make keys
// computable before rendering, and revision-level key parts. All are LRUs
// bounded by (estimated) bytes.
type cache struct {
	// results are kept encoded (storedResult); hot holds the decoded
	// results in use, those served in the last hotFor.
	results  *lru[*storedResult]
	hot      *lru[*Result]
	failures *lru[error]
	memo     *lru[memoEntry]
	variants *lru[[]memoEntry]
	revKeys  *lru[string]
	// fields holds results of templated fields (templater.fields).
	fields *lru[fieldMemo]
	// logins are OCI registry logins by credentialsKey.
	logins *lru[login]
	flight singleflight.Group
	hotFor time.Duration // defaultHotFor
	// sweep expires hot results when no lookup comes to do it; nil when
	// none is due (sweepMu).
	sweep   *time.Timer
	sweepMu sync.Mutex
	// variantsMu makes addVariant's read-modify-write atomic.
	variantsMu sync.Mutex
	hits       atomic.Uint64
	misses     atomic.Uint64
	// decrypts counts SOPS decryptions (tests).
	decrypts atomic.Uint64
}

func newCache(resultBytes int64) *cache {
	return &cache{
		results:  newLRU[*storedResult](resultBytes),
		hot:      newLRU[*Result](resultBytes / 4),
		hotFor:   defaultHotFor,
		failures: newLRU[error](4 << 20),
		memo:     newLRU[memoEntry](16 << 20),
		variants: newLRU[[]memoEntry](4 << 20),
		fields:   newLRU[fieldMemo](4 << 20),
		logins:   newLRU[login](1 << 20),
		revKeys:  newLRU[string](8 << 20),
	}
}

// defaultHotFor is how long a result stays decoded after it was last served. A
// pass over the fleet serves a result that many clusters share many times
// in a row, so it stays decoded while the pass runs; a cluster's own
// results are served once a pass and go back to their encoded form.
const defaultHotFor = 30 * time.Second

// result returns the cached result of key: the decoded one if it is in
// use, else the stored one decoded (and kept decoded while in use). A
// fresh render is not kept decoded: a cluster's own render serves the
// pass that made it and no other, and is garbage when that pass ends;
// a render many clusters share is decoded once more, by the first hit.
// Results last served before hotFor are out of use.
func (c *cache) result(key string) (*Result, bool) {
	c.hot.expire(time.Now().Add(-c.hotFor))
	if res, ok := c.hot.get(key); ok {
		return res, true
	}
	st, ok := c.results.get(key)
	if !ok {
		return nil, false
	}
	res, err := st.decode()
	if err != nil { // it was encoded from objects: render it again
		return nil, false
	}
	c.keepHot(key, res, st.decodedCost())
	return res, true
}

// keepHot keeps res decoded while it is in use, and makes sure a sweep is
// due: a daemon between commits and drift intervals looks nothing up.
func (c *cache) keepHot(key string, res *Result, cost int64) {
	if c.hot.max <= 0 {
		return // no cache
	}
	c.hot.put(key, res, cost)
	c.sweepMu.Lock()
	defer c.sweepMu.Unlock()
	if c.sweep == nil {
		c.sweep = time.AfterFunc(c.hotFor, c.sweepHot)
	}
}

// sweepHot expires the hot results out of use and, if any are left, is
// due again when the oldest of them goes out of use.
func (c *cache) sweepHot() {
	now := time.Now()
	c.hot.expire(now.Add(-c.hotFor))
	c.sweepMu.Lock()
	defer c.sweepMu.Unlock()
	c.sweep = nil
	if oldest, ok := c.hot.oldest(); ok {
		c.sweep = time.AfterFunc(max(oldest.Add(c.hotFor).Sub(now), c.hotFor/30), c.sweepHot)
	}
}

// addVariant records that renders of memoKey read e.reads (and used keys,
// if e.usedKeys), most recent first, keeping maxVariants.
func (c *cache) addVariant(memoKey string, e memoEntry) {
	c.variantsMu.Lock()
	defer c.variantsMu.Unlock()
	old, _ := c.variants.get(memoKey)
	id := e.variant()
	vs := []memoEntry{e}
	cost := e.cost()
	for _, v := range old {
		if len(vs) < maxVariants && v.variant() != id {
			vs = append(vs, v)
			cost += v.cost()
		}
	}
	c.variants.put(memoKey, vs, cost)
}

// maxAttempts bounds how often a request waits on a concurrent render
// whose result turns out to be for other inputs before rendering itself.
const maxAttempts = 3

// cachedRender serves p from the cache, joins a concurrent render of the
// same inputs, or renders. A request whose key is not computable yet (no
// memo entry) joins a concurrent render of the same add-on specs and then
// checks that the result's key is its own. Whichever way, the result is
// the cached one, shared (Result.share): its objects are not copied.
func (r *Renderer) cachedRender(ctx context.Context, p *plan) (*Result, error) {
	for range maxAttempts {
		key, known, err := r.inputKey(ctx, p)
		if cf, ok := err.(*cachedFailure); ok {
			r.cache.hits.Add(1)
			return nil, cf.err
		}
		if err != nil {
			return nil, err
		}
		if known {
			if res, ok := r.cache.result(key); ok {
				r.cache.hits.Add(1)
				return res.share(), nil
			}
		}
		res, shared, err := r.join(ctx, p, flightKey(p, key, known))
		switch {
		case err != nil && shared && !known:
			continue // the other render's failure may be its own facts'
		case err != nil && shared:
			r.cache.hits.Add(1) // the same inputs failed for another request
			return nil, err
		case err != nil:
			return nil, err
		case !shared:
			return res.share(), nil
		}
		if mine, ok, err := r.inputKey(ctx, p); err == nil && ok && mine == res.Key {
			r.cache.hits.Add(1)
			return res.share(), nil
		}
	}
	res, err := r.renderAndStore(ctx, p)
	if err != nil {
		return nil, err
	}
	return res.share(), nil
}

func flightKey(p *plan, key string, known bool) string {
	if known {
		return "key:" + key
	}
	parts := []string{"pre", p.req.Revision}
	for _, ap := range p.addons {
		parts = append(parts, ap.memoKey)
	}
	return hashStrings(parts...)
}

// join runs lookupOrRender once per flight key; shared tells whether the
// result came from another request's call.
func (r *Renderer) join(ctx context.Context, p *plan, fk string) (*Result, bool, error) {
	// A cancelled request fails even when the flight would finish first
	// (select picks at random between two ready cases).
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	var mine atomic.Bool // set only if this call's function runs
	ch := r.cache.flight.DoChan(fk, func() (any, error) {
		mine.Store(true)
		return r.lookupOrRender(context.WithoutCancel(ctx), p)
	})
	select {
	case <-ctx.Done():
		return nil, false, ctx.Err()
	case out := <-ch:
		shared := !mine.Load()
		if out.Err != nil {
			return nil, shared, out.Err
		}
		return out.Val.(*Result), shared, nil
	}
}

// lookupOrRender looks p up once more, since a render that finished
// between the caller's lookup and its joining may have stored it, and
// renders it otherwise.
func (r *Renderer) lookupOrRender(ctx context.Context, p *plan) (*Result, error) {
	key, known, err := r.inputKey(ctx, p)
	if cf, ok := err.(*cachedFailure); ok {
		r.cache.hits.Add(1)
		return nil, cf.err
	}
	if err == nil && known {
		if res, ok := r.cache.result(key); ok {
			r.cache.hits.Add(1)
			return res, nil
		}
	}
	return r.renderAndStore(ctx, p)
}

// renderAndStore renders p, records what each add-on used and caches the
// result under the key those records give.
func (r *Renderer) renderAndStore(ctx context.Context, p *plan) (*Result, error) {
	r.cache.misses.Add(1)
	res, entries, err := r.renderPlan(ctx, p)
	if err != nil {
		r.rememberFailure(ctx, p, entries, err)
		return nil, err
	}
	keys := make([]string, len(p.addons))
	for i := range p.addons {
		if keys[i], err = r.addonKey(ctx, p, &p.addons[i], entries[i]); err != nil {
			return nil, err
		}
	}
	res.Key = resultKey(p, keys)
	st, err := res.store()
	if err != nil {
		return nil, err
	}
	// The result goes in before the memo entries that make its key
	// computable, so a request that can compute the key finds it.
	r.cache.results.put(res.Key, st, st.cost())
	for i := range p.addons {
		r.remember(p, &p.addons[i], entries[i])
	}
	return res, nil
}

// rememberFailure caches a failure that depends only on the render's
// inputs, so that a broken revision costs one render per distinct input,
// not one per cluster and pass. Failures of Helm and OCI add-ons
// (networks, registries), of renders stopped at a sandbox limit (a
// deadline depends on the machine's load) and of cancelled renders are not
// cached.
func (r *Renderer) rememberFailure(ctx context.Context, p *plan, entries []memoEntry, err error) {
	n := len(entries)
	if n == 0 || p.addons[n-1].addon.Helm != nil || p.addons[n-1].addon.OCI != nil || errors.Is(err, sandbox.ErrLimit) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	keys := make([]string, n)
	for i := range n {
		k, kerr := r.addonKey(ctx, p, &p.addons[i], entries[i])
		if kerr != nil {
			return
		}
		keys[i] = k
	}
	r.cache.failures.put(failureKey(p, keys), err, int64(len(err.Error())+256))
	for i := range n {
		r.remember(p, &p.addons[i], entries[i])
	}
}

// cachedFailure is a failure served from the cache.
type cachedFailure struct{ err error }

func (c *cachedFailure) Error() string { return c.err.Error() }
func (c *cachedFailure) Unwrap() error { return c.err }

// lru is a least-recently-used map bounded by the sum of entry costs.
type lru[V any] struct {
	mu    sync.Mutex
	max   int64
	size  int64
	order *list.List
	items map[string]*list.Element
}

type lruEntry[V any] struct {
	key  string
	val  V
	cost int64
	used time.Time // last get or put
}

func newLRU[V any](maxCost int64) *lru[V] {
	return &lru[V]{max: maxCost, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru[V]) get(k string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	e := el.Value.(*lruEntry[V])
	e.used = time.Now()
	return e.val, true
}

// oldest is when the least recently used entry was last used.
func (c *lru[V]) oldest() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	last := c.order.Back()
	if last == nil {
		return time.Time{}, false
	}
	return last.Value.(*lruEntry[V]).used, true
}

// expire removes the entries last used before t.
func (c *lru[V]) expire(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for last := c.order.Back(); last != nil; last = c.order.Back() {
		e := last.Value.(*lruEntry[V])
		if !e.used.Before(t) {
			return
		}
		c.order.Remove(last)
		delete(c.items, e.key)
		c.size -= e.cost
	}
}

// put stores v unless its cost alone exceeds the bound, evicting the least
// recently used entries to make room.
func (c *lru[V]) put(k string, v V, cost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.size -= el.Value.(*lruEntry[V]).cost
		c.order.Remove(el)
		delete(c.items, k)
	}
	if cost > c.max {
		return
	}
	c.items[k] = c.order.PushFront(&lruEntry[V]{key: k, val: v, cost: cost, used: time.Now()})
	c.size += cost
	for c.size > c.max {
		last := c.order.Back()
		e := last.Value.(*lruEntry[V])
		c.order.Remove(last)
		delete(c.items, e.key)
		c.size -= e.cost
	}
}

func (c *lru[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}
