package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/cache"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// DefaultBatch is how long changes are gathered before one notification.
const DefaultBatch = 100 * time.Millisecond

// ErrNotSynced is returned while a new watch has not listed yet; the
// watch notifies once it has.
var ErrNotSynced = errors.New("event watch not synced yet")

// Options configures a Manager.
type Options struct {
	Lua *lua.Runner
	Log *slog.Logger
	// Batch gathers changes of one watch for this long before Notify
	// (DefaultBatch when 0).
	Batch time.Duration
	// Notify is called, off the watch, when the resources an event source
	// selects on a cluster may have changed, or its watch just synced.
	Notify func(cluster, source string)
}

// Manager holds the event watches of the fleet, one per (cluster, event
// source). Safe for concurrent use.
type Manager struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	watches map[watchKey]*watch
}

type watchKey struct{ cluster, source string }

// NewManager returns a Manager whose watches live until Close.
func NewManager(opts Options) *Manager {
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Lua == nil {
		opts.Lua = lua.NewRunner(lua.Options{})
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{opts: opts, ctx: ctx, cancel: cancel, watches: map[watchKey]*watch{}}
}

// SetNotify replaces the notification function (the daemon's queue of the
// session being run).
func (m *Manager) SetNotify(fn func(cluster, source string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opts.Notify = fn
}

func (m *Manager) notify(cluster, source string) {
	m.mu.Lock()
	fn := m.opts.Notify
	m.mu.Unlock()
	if fn != nil {
		fn(cluster, source)
	}
}

// Close stops every watch.
func (m *Manager) Close() {
	m.cancel()
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, w := range m.watches {
		w.stop()
		delete(m.watches, k)
	}
}

// Forget stops the watches of a cluster that left the fleet or is paused.
func (m *Manager) Forget(cluster string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, w := range m.watches {
		if k.cluster == cluster {
			w.stop()
			delete(m.watches, k)
		}
	}
}

// watch is the informers of one event source on one cluster, one per
// resource selector.
type watch struct {
	key    watchKey
	src    *spec.EventSource
	client *apply.Client
	cancel context.CancelFunc
	// namespaces are those of a namespace-scoped entry, nil for a whole
	// cluster.
	namespaces []string
	// informers are each resource selector's: one, or one per namespace of
	// a namespace-scoped entry.
	informers [][]*apply.Informer
	// namespaced tells, per resource selector, whether its kind is
	// namespaced (for a tenant's grant).
	namespaced []bool
	// leases hold the informers in the cluster client's shared registry:
	// event sources with the same selector share one.
	leases []*apply.InformerLease

	mu      sync.Mutex
	pending bool
}

func (w *watch) stop() {
	w.cancel()
	for _, l := range w.leases {
		l.Release()
	}
}

func (w *watch) synced() bool {
	for _, infs := range w.informers {
		for _, inf := range infs {
			if !inf.HasSynced() {
				return false
			}
		}
	}
	return true
}

// list returns the cached objects of resource selector i.
func (w *watch) list(i int) []any {
	var out []any
	for _, inf := range w.informers[i] {
		out = append(out, inf.List()...)
	}
	return out
}

// ensure returns the watch of src on the cluster, started on first use and
// restarted when the event source or the cluster's client changed.
func (m *Manager) ensure(cluster string, namespaces []string, cl *apply.Client, src *spec.EventSource) (*watch, error) {
	key := watchKey{cluster: cluster, source: src.Metadata.Name}
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.watches[key]; w != nil {
		if w.client == cl && sameSource(w.src, src) && slices.Equal(w.namespaces, namespaces) {
			return w, nil
		}
		w.stop()
		delete(m.watches, key)
	}
	w, err := m.start(key, namespaces, cl, src)
	if err != nil {
		return nil, err
	}
	m.watches[key] = w
	return w, nil
}

func (m *Manager) start(key watchKey, namespaces []string, cl *apply.Client, src *spec.EventSource) (*watch, error) {
	ctx, cancel := context.WithCancel(m.ctx)
	w := &watch{key: key, src: src, client: cl, cancel: cancel, namespaces: slices.Clone(namespaces)}
	for i, rs := range src.Spec.ResourceSelectors {
		leases, namespaced, err := m.informers(cl, rs, w)
		if err != nil {
			w.stop()
			return nil, fmt.Errorf("event source %s: spec.resourceSelectors[%d]: %w", src.Metadata.Name, i, err)
		}
		infs := make([]*apply.Informer, len(leases))
		for j, l := range leases {
			infs[j] = l.Informer
		}
		w.informers = append(w.informers, infs)
		w.namespaced = append(w.namespaced, namespaced)
		w.leases = append(w.leases, leases...)
	}
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), w.informersSynced()...) {
			m.changed(w)
		}
	}()
	return w, nil
}

func (w *watch) informersSynced() []cache.InformerSynced {
	out := make([]cache.InformerSynced, len(w.leases))
	for i, l := range w.leases {
		out[i] = l.HasSynced
	}
	return out
}

// eventView is the shared-registry view of event watches: whole objects
// less managed fields and the last-applied annotation (slim).
const eventView = "event"

// informer acquires the informer of one resource selector from the
// cluster's shared registry: its namespace and label filters go to the
// server as the watch's namespace and label selector, so another event
// source with the same selector on the cluster shares the watch. It also
// tells whether the kind is namespaced.
func (m *Manager) informers(cl *apply.Client, rs spec.ResourceSelector, w *watch) ([]*apply.InformerLease, bool, error) {
	gk := schema.GroupKind{Group: rs.Group, Kind: rs.Kind}
	mapping, err := cl.Mapper.RESTMapping(gk, rs.Version)
	if err != nil {
		return nil, false, fmt.Errorf("kind %s/%s %s: %w", rs.Group, rs.Version, rs.Kind, err)
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	nss, err := watchNamespaces(w.key.cluster, w.namespaces, rs, namespaced)
	if err != nil {
		return nil, false, err
	}
	sel, err := labelSelector(rs.LabelFilters)
	if err != nil {
		return nil, false, err
	}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { m.changed(w) },
		UpdateFunc: func(any, any) { m.changed(w) },
		DeleteFunc: func(any) { m.changed(w) },
	}
	var leases []*apply.InformerLease
	for _, ns := range nss {
		key := apply.InformerKey{Resource: mapping.Resource, Namespace: ns, LabelSelector: sel, View: eventView}
		lease, err := cl.Informers().Acquire(key, slim, h)
		if err != nil {
			for _, l := range leases {
				l.Release()
			}
			return nil, false, err
		}
		leases = append(leases, lease)
	}
	return leases, namespaced, nil
}

// watchNamespaces are the namespaces a resource selector is watched in:
// its own ("" for every namespace) on a whole cluster; on a
// namespace-scoped entry its own when the entry has it, else each of the
// entry's, and never a cluster-scoped kind.
func watchNamespaces(cluster string, entry []string, rs spec.ResourceSelector, namespaced bool) ([]string, error) {
	switch {
	case len(entry) == 0:
		return []string{rs.Namespace}, nil
	case !namespaced:
		return nil, fmt.Errorf("cluster %s is namespace-scoped (spec.namespaces): kind %s is cluster-scoped and cannot be watched", cluster, rs.Kind)
	case rs.Namespace == "":
		return entry, nil
	case slices.Contains(entry, rs.Namespace):
		return []string{rs.Namespace}, nil
	}
	return nil, fmt.Errorf("namespace %s is not one of cluster %s's namespaces (spec.namespaces: %s)", rs.Namespace, cluster, strings.Join(entry, ", "))
}

// changed batches the changes of a watch: the first one of a window
// schedules one notification at its end.
func (m *Manager) changed(w *watch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending {
		return
	}
	w.pending = true
	time.AfterFunc(m.opts.Batch, func() {
		w.mu.Lock()
		w.pending = false
		w.mu.Unlock()
		m.notify(w.key.cluster, w.key.source)
	})
}

// labelSelector turns Sveltos label filters into a server-side selector:
// Equal is key=value, Different key!=value (which a missing label meets).
func labelSelector(filters []spec.LabelFilter) (string, error) {
	sel := labels.NewSelector()
	for _, lf := range filters {
		op := selection.Equals
		if lf.Operation == spec.LabelFilterDifferent {
			op = selection.NotEquals
		}
		r, err := labels.NewRequirement(lf.Key, op, []string{lf.Value})
		if err != nil {
			return "", fmt.Errorf("labelFilters %s: %w", lf.Key, err)
		}
		sel = sel.Add(*r)
	}
	return sel.String(), nil
}

// slim drops what templates never need and every write changes: managed
// fields and the last-applied annotation.
func slim(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	u.SetManagedFields(nil)
	if a := u.GetAnnotations(); a != nil {
		delete(a, "kubectl.kubernetes.io/last-applied-configuration")
		u.SetAnnotations(a)
	}
	return u, nil
}

func sameSource(a, b *spec.EventSource) bool {
	if a == b {
		return true
	}
	return fmt.Sprintf("%#v", a.Spec) == fmt.Sprintf("%#v", b.Spec)
}

// sortObjects orders objects by namespace and name.
func sortObjects(objs []map[string]any) {
	sort.Slice(objs, func(i, j int) bool {
		return objectKey(objs[i]) < objectKey(objs[j])
	})
}

// Retain stops the watches that keep returns false for: an event source
// no profile reads any more, or a cluster that left the fleet.
func (m *Manager) Retain(keep func(cluster, source string) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, w := range m.watches {
		if !keep(k.cluster, k.source) {
			w.stop()
			delete(m.watches, k)
		}
	}
}

// Watches returns how many watches run.
func (m *Manager) Watches() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.watches)
}
