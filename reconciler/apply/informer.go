package apply

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Informer is one list and watch of a cluster's resource with its cache:
// it lists into the cache, watches from the list's resourceVersion,
// watches again where a watch ended, lists again when the server no
// longer has that resourceVersion (410 Gone), and backs off after
// failures. It transforms each object, stores it and hands the change to
// its users' handlers, in order, on its one goroutine. Handlers must
// therefore not block (the drift watches and event sources only queue
// work). It is lighter than client-go's shared informer (about ten
// goroutines and a growing buffer per handler for each watch) and than
// its Reflector (four goroutines with the watch's decoder and the HTTP/2
// stream): two, its own and the stream's. A fleet daemon runs one watch
// per kind and cluster.
type Informer struct {
	transform cache.TransformFunc
	lw        listWatch

	// dispatchMu orders the changes and the handlers' registration: a
	// handler added sees every object once, as a replayed addition or as
	// a change. Held while transforming and handing a change out.
	dispatchMu sync.Mutex
	handlers   map[*informerHandler]bool

	storeMu sync.RWMutex
	items   map[string]any

	synced atomic.Bool
	// lastErr is the last failure of a list or watch (nil once one works).
	errMu   sync.Mutex
	lastErr error
}

type informerHandler struct {
	h      cache.ResourceEventHandler
	synced atomic.Bool
}

func (h *informerHandler) HasSynced() bool { return h.synced.Load() }

// newInformer returns the informer of one watch key; Run starts it.
func newInformer(lw listWatch, transform cache.TransformFunc) *Informer {
	return &Informer{transform: transform, lw: lw, handlers: map[*informerHandler]bool{}, items: map[string]any{}}
}

// Informer back-off after a failed list or watch: from informerMinBackoff,
// doubling up to informerMaxBackoff, with jitter.
const (
	informerMinBackoff = 800 * time.Millisecond
	informerMaxBackoff = 30 * time.Second
)

// Run lists and watches until ctx ends.
func (inf *Informer) Run(ctx context.Context) {
	delay := informerMinBackoff
	listed, rv := false, ""
	for ctx.Err() == nil {
		var err error
		start, watching := time.Now(), listed
		if !watching {
			rv, err = inf.list(ctx)
			listed = err == nil
		} else {
			rv, err = inf.lw.watch(ctx, rv, inf.apply)
		}
		switch {
		case ctx.Err() != nil:
			return
		case watching && isExpired(err):
			listed = false // the resourceVersion is gone: list again at once
			continue
		case err == nil && (!watching || time.Since(start) >= time.Second):
			inf.failed(nil)
			delay = informerMinBackoff
			continue
		}
		// A failure (a list's expired continuation among them: listed
		// again), or a watch the server (or a proxy) ended at once: try
		// again after a pause, a watch from the same resourceVersion.
		if err != nil {
			inf.failed(err)
		}
		if !sleepCtx(ctx, jitter(delay)) {
			return
		}
		delay = min(2*delay, informerMaxBackoff)
	}
}

// list takes a fresh list into the cache and returns its resourceVersion.
func (inf *Informer) list(ctx context.Context) (string, error) {
	items, rv, err := inf.lw.listAll(ctx)
	if err != nil {
		return "", err
	}
	list := make([]any, len(items))
	for i := range items {
		list[i] = &items[i]
	}
	return rv, (*informerStore)(inf).Replace(list, rv)
}

// isExpired reports a resourceVersion (or list continuation) the server no
// longer serves: a fresh list is the answer.
func isExpired(err error) bool {
	return apierrors.IsGone(err) || apierrors.IsResourceExpired(err)
}

// jitter spreads d by up to a fifth, so a fleet's retries do not align.
func jitter(d time.Duration) time.Duration { return d + rand.N(d/5+1) }

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Err returns the last list or watch failure, nil while it works.
func (inf *Informer) Err() error {
	inf.errMu.Lock()
	defer inf.errMu.Unlock()
	return inf.lastErr
}

func (inf *Informer) failed(err error) {
	inf.errMu.Lock()
	inf.lastErr = err
	inf.errMu.Unlock()
}

// apply takes one watch event into the cache.
func (inf *Informer) apply(t watch.EventType, u *unstructured.Unstructured) error {
	s := (*informerStore)(inf)
	if t == watch.Deleted {
		return s.Delete(u)
	}
	return s.put(u)
}

// HasSynced reports whether the first list is in the cache.
func (inf *Informer) HasSynced() bool { return inf.synced.Load() }

// GetByKey returns the cached object of a key (namespace/name, or name).
func (inf *Informer) GetByKey(key string) (any, bool) {
	inf.storeMu.RLock()
	defer inf.storeMu.RUnlock()
	obj, ok := inf.items[key]
	return obj, ok
}

// List returns the cached objects.
func (inf *Informer) List() []any {
	inf.storeMu.RLock()
	defer inf.storeMu.RUnlock()
	out := make([]any, 0, len(inf.items))
	for _, obj := range inf.items {
		out = append(out, obj)
	}
	return out
}

// ListKeys returns the keys of the cached objects.
func (inf *Informer) ListKeys() []string {
	inf.storeMu.RLock()
	defer inf.storeMu.RUnlock()
	return slices.Collect(maps.Keys(inf.items))
}

// addHandler registers h; once the informer has listed, it first hands h
// every cached object as an addition.
func (inf *Informer) addHandler(h cache.ResourceEventHandler) *informerHandler {
	inf.dispatchMu.Lock()
	defer inf.dispatchMu.Unlock()
	reg := &informerHandler{h: h}
	inf.handlers[reg] = true
	if inf.synced.Load() {
		for _, obj := range inf.List() {
			h.OnAdd(obj, true)
		}
		reg.synced.Store(true)
	}
	return reg
}

func (inf *Informer) removeHandler(reg *informerHandler) {
	inf.dispatchMu.Lock()
	defer inf.dispatchMu.Unlock()
	delete(inf.handlers, reg)
}

// informerStore is the Informer's cache as its lists and watches fill it
// (the methods of client-go's cache.Store it needs).
type informerStore Informer

func (s *informerStore) inf() *Informer { return (*Informer)(s) }

func (s *informerStore) Add(obj any) error    { return s.put(obj) }
func (s *informerStore) Update(obj any) error { return s.put(obj) }

func (s *informerStore) put(obj any) error {
	inf := s.inf()
	inf.dispatchMu.Lock()
	defer inf.dispatchMu.Unlock()
	obj, key, err := inf.prepare(obj)
	if err != nil {
		return err
	}
	inf.storeMu.Lock()
	old, existed := inf.items[key]
	inf.items[key] = obj
	inf.storeMu.Unlock()
	for reg := range inf.handlers {
		if existed {
			reg.h.OnUpdate(old, obj)
		} else {
			reg.h.OnAdd(obj, false)
		}
	}
	return nil
}

func (s *informerStore) Delete(obj any) error {
	inf := s.inf()
	inf.dispatchMu.Lock()
	defer inf.dispatchMu.Unlock()
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return fmt.Errorf("informer: %w", err)
	}
	inf.storeMu.Lock()
	old, existed := inf.items[key]
	delete(inf.items, key)
	inf.storeMu.Unlock()
	if !existed {
		return nil
	}
	for reg := range inf.handlers {
		reg.h.OnDelete(old)
	}
	return nil
}

// Replace takes a (re)list: objects not in it are deleted, as unknown
// final states; the others are added or updated. The first one syncs the
// informer and the handlers registered so far.
func (s *informerStore) Replace(list []any, _ string) error {
	inf := s.inf()
	inf.dispatchMu.Lock()
	defer inf.dispatchMu.Unlock()
	items := make(map[string]any, len(list))
	for _, obj := range list {
		obj, key, err := inf.prepare(obj)
		if err != nil {
			return err
		}
		items[key] = obj
	}
	inf.storeMu.Lock()
	old := inf.items
	inf.items = items
	inf.storeMu.Unlock()
	initial := !inf.synced.Load()
	for reg := range inf.handlers {
		inf.replaced(reg.h, old, items, initial)
	}
	inf.synced.Store(true)
	for reg := range inf.handlers {
		reg.synced.Store(true)
	}
	return nil
}

// replaced hands one handler the difference between two cache contents.
func (inf *Informer) replaced(h cache.ResourceEventHandler, old, cur map[string]any, initial bool) {
	for key, obj := range old {
		if _, ok := cur[key]; !ok {
			h.OnDelete(cache.DeletedFinalStateUnknown{Key: key, Obj: obj})
		}
	}
	for key, obj := range cur {
		if prev, ok := old[key]; ok {
			h.OnUpdate(prev, obj)
		} else {
			h.OnAdd(obj, initial)
		}
	}
}

// prepare transforms an object and returns its cache key.
func (inf *Informer) prepare(obj any) (any, string, error) {
	if inf.transform != nil {
		var err error
		if obj, err = inf.transform(obj); err != nil {
			return nil, "", fmt.Errorf("informer: transform: %w", err)
		}
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil, "", fmt.Errorf("informer: %w", err)
	}
	return obj, key, nil
}
