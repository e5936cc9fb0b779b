package apply

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// Informer is one list and watch of a cluster's resource with its cache:
// client-go's Reflector lists and watches into it (relisting, resuming
// and backing off as client-go's informers do), and it transforms each
// object, stores it and hands the change to its users' handlers, in
// order, on the reflector's goroutine. Handlers must therefore not block
// (the drift watches and event sources only queue work). It is lighter
// than client-go's shared informer, which runs about ten goroutines and a
// growing buffer per handler for each watch; a fleet daemon runs one
// watch per kind and cluster.
type Informer struct {
	transform cache.TransformFunc
	reflector *cache.Reflector

	// dispatchMu orders the changes and the handlers' registration: a
	// handler added sees every object once, as a replayed addition or as
	// a change. Held while transforming and handing a change out.
	dispatchMu sync.Mutex
	handlers   map[*informerHandler]bool

	storeMu sync.RWMutex
	items   map[string]any

	synced atomic.Bool
}

type informerHandler struct {
	h      cache.ResourceEventHandler
	synced atomic.Bool
}

func (h *informerHandler) HasSynced() bool { return h.synced.Load() }

// newInformer returns the informer of one watch key; Run starts it.
func newInformer(client dynamic.Interface, key InformerKey, transform cache.TransformFunc) *Informer {
	res := client.Resource(key.Resource).Namespace(key.Namespace)
	tweak := func(o metav1.ListOptions) metav1.ListOptions {
		o.LabelSelector, o.FieldSelector = key.LabelSelector, key.FieldSelector
		return o
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return res.List(ctx, tweak(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return res.Watch(ctx, tweak(o))
		},
	}
	inf := &Informer{transform: transform, handlers: map[*informerHandler]bool{}, items: map[string]any{}}
	inf.reflector = cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client),
		&unstructured.Unstructured{}, (*informerStore)(inf),
		cache.ReflectorOptions{Name: key.String(), TypeDescription: key.Resource.String()})
	return inf
}

// Run lists and watches until ctx ends.
func (inf *Informer) Run(ctx context.Context) { inf.reflector.RunWithContext(ctx) }

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

// informerStore is the Informer as the Reflector's store.
type informerStore Informer

func (s *informerStore) inf() *Informer { return (*Informer)(s) }

func (s *informerStore) Add(obj any) error    { return s.put(obj) }
func (s *informerStore) Update(obj any) error { return s.put(obj) }
func (s *informerStore) Resync() error        { return nil }

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
