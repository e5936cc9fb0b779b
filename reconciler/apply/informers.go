package apply

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Shared informers of a cluster
//
// Informers is the one home of a cluster client's watches: drift detection
// and event watches both acquire their informers here, over the client's
// watch connections (Client.Watch) and REST mapper. Users asking for the
// same InformerKey share one informer, so one list and one watch stream,
// each with its own event handler; the informer stops when its last user
// releases it. Sharing needs equal keys: drift detection watches the
// objects of its drift-detected profiles (label regatta.dev/profile in
// ...) and keeps them in its own reduced form (a View of its own), so it
// shares with no event source; event sources with the same selector (kind,
// namespace, labels) on a cluster share one.

// InformerKey identifies one watch of a cluster.
type InformerKey struct {
	Resource      schema.GroupVersionResource
	Namespace     string
	LabelSelector string
	FieldSelector string
	// View names the transform the informer's cache applies to objects;
	// users whose views differ get informers of their own (a cache holds
	// objects in one form).
	View string
}

func (k InformerKey) String() string {
	return fmt.Sprintf("%s ns=%q labels=%q fields=%q view=%s", k.Resource, k.Namespace, k.LabelSelector, k.FieldSelector, k.View)
}

// Informers holds the shared informers of one client. Safe for concurrent
// use; the zero value is not usable (see Client.Informers).
type Informers struct {
	// clients list (no request timeout, see listAll) and request raw
	// watch streams.
	clients *watchClients
	mu      sync.Mutex
	entries map[InformerKey]*informerEntry
	started int
}

type informerEntry struct {
	inf   *Informer
	stop  context.CancelFunc
	done  chan struct{}
	users int
}

// InformerLease is one user's hold on a shared informer: its handler
// receives the informer's events until Release.
type InformerLease struct {
	Informer *Informer
	reg      *Informers
	key      InformerKey
	handle   *informerHandler
	once     sync.Once
}

func newInformers(clients *watchClients) *Informers {
	return &Informers{clients: clients, entries: map[InformerKey]*informerEntry{}}
}

// Acquire returns a lease on the informer of key, started on first use
// with transform (later users of the key get the first one's: keys with
// one View must have equivalent transforms), and adds h to it. An informer
// already running replays its objects to h as additions.
func (r *Informers) Acquire(key InformerKey, transform cache.TransformFunc, h cache.ResourceEventHandler) (*InformerLease, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entries[key]
	if e == nil {
		var err error
		if e, err = r.start(key, transform); err != nil {
			return nil, err
		}
	}
	handle := e.inf.addHandler(h)
	e.users++
	return &InformerLease{Informer: e.inf, reg: r, key: key, handle: handle}, nil
}

// start creates and runs the informer of key; r.mu is held.
func (r *Informers) start(key InformerKey, transform cache.TransformFunc) (*informerEntry, error) {
	list, raw, err := r.clients.get()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", key.Resource, err)
	}
	inf := newInformer(newListWatch(list, raw, key.Resource, key.Namespace, key.LabelSelector, key.FieldSelector), transform)
	ctx, stop := context.WithCancel(context.Background())
	e := &informerEntry{inf: inf, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(e.done)
		inf.Run(ctx)
	}()
	r.entries[key] = e
	r.started++
	return e, nil
}

// stopEntry stops an informer and forgets it; r.mu is held. It does not
// wait for the informer to end (see Release).
func (r *Informers) stopEntry(key InformerKey, e *informerEntry) {
	e.stop()
	delete(r.entries, key)
}

// Release removes the lease's handler; the last user's release stops the
// informer and waits for it to end. Releasing twice is harmless.
func (l *InformerLease) Release() {
	l.once.Do(func() {
		r := l.reg
		r.mu.Lock()
		e := r.entries[l.key]
		if e == nil || e.inf != l.Informer {
			r.mu.Unlock()
			return
		}
		e.inf.removeHandler(l.handle)
		e.users--
		last := e.users == 0
		if last {
			r.stopEntry(l.key, e)
		}
		r.mu.Unlock()
		if last {
			<-e.done
		}
	})
}

// HasSynced reports whether the informer has listed and the lease's
// handler has been given every listed object.
func (l *InformerLease) HasSynced() bool { return l.handle.HasSynced() }

// Running returns how many informers run.
func (r *Informers) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.entries)
}

// Started returns how many informers were started since the client was
// built (a shared key counts once).
func (r *Informers) Started() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started
}
