package apply

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/clusterreader"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// healthWatch follows the health of a set of objects with watches instead
// of polling them: one list and watch per (kind, namespace) of the set,
// narrowed to the object by metadata.name when it is alone there, else to
// the profile's label. Every event is judged by the healthReader (kstatus
// or the health override, the same verdicts as a poll) and wakes Changed.
// A watch that closes or expires (410 Gone) is listed and watched again;
// a kind that cannot be listed or watched (RBAC of a namespace-scoped
// entry, an aggregated API without watch) falls back to polling: Polled
// names its objects, which the owner of the watch reads each poll interval.
type healthWatch struct {
	cl       *Client
	h        *healthReader
	reader   engine.ClusterReader
	profile  string
	gens     map[object.ObjMetadata]int64
	interval time.Duration
	log      *slog.Logger
	// onChange, when set, is called after each recorded status.
	onChange func()

	changed chan struct{}
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu     sync.Mutex
	polled object.ObjMetadataSet
}

// watchGroup is one (kind, namespace) of a healthWatch.
type watchGroup struct {
	gvk  schema.GroupVersionKind
	gvr  schema.GroupVersionResource
	ns   string
	ids  map[string]object.ObjMetadata // by name
	list metav1.ListOptions
}

// healthWatchOptions configure startHealthWatch.
type healthWatchOptions struct {
	// profile narrows watches of several objects to the profile's label.
	profile string
	// gens are the generations the apply returned (0 or absent: unknown):
	// an object seen at an older generation is stale and never judged.
	gens     map[object.ObjMetadata]int64
	interval time.Duration
	log      *slog.Logger
	onChange func()
}

// startHealthWatch starts watching ids until ctx ends or stop.
func startHealthWatch(ctx context.Context, cl *Client, h *healthReader, ids object.ObjMetadataSet, o healthWatchOptions) *healthWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &healthWatch{cl: cl, h: h, profile: o.profile, gens: o.gens, interval: o.interval, log: o.log,
		onChange: o.onChange, changed: make(chan struct{}, 1), cancel: cancel}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	reader, err := clusterreader.NewDirectClusterReader(cl.Kube, cl.Mapper, ids)
	if err != nil {
		w.fallBack(ids)
		return w
	}
	w.reader = reader
	groups, unmapped := w.groups(ids)
	w.fallBack(unmapped)
	for _, g := range groups {
		w.wg.Go(func() { w.run(ctx, g) })
	}
	return w
}

// stop ends the watches and waits for their goroutines.
func (w *healthWatch) stop() {
	w.cancel()
	w.wg.Wait()
}

// Changed receives after a status was recorded or a kind fell back to
// polling (coalesced).
func (w *healthWatch) Changed() <-chan struct{} { return w.changed }

// Polled returns the objects whose kind cannot be watched.
func (w *healthWatch) Polled() object.ObjMetadataSet {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.polled)
}

func (w *healthWatch) fallBack(ids object.ObjMetadataSet) {
	if len(ids) == 0 {
		return
	}
	w.mu.Lock()
	w.polled = append(w.polled, ids...)
	w.mu.Unlock()
	w.notify()
}

func (w *healthWatch) notify() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
	if w.onChange != nil {
		w.onChange()
	}
}

// groups sorts ids by kind and namespace; ids of unknown kinds are
// returned apart.
func (w *healthWatch) groups(ids object.ObjMetadataSet) (map[string]*watchGroup, object.ObjMetadataSet) {
	groups := map[string]*watchGroup{}
	var unmapped object.ObjMetadataSet
	for _, id := range ids {
		m, err := w.cl.Mapper.RESTMapping(id.GroupKind)
		if err != nil {
			unmapped = append(unmapped, id)
			continue
		}
		key := m.Resource.String() + "/" + id.Namespace
		g := groups[key]
		if g == nil {
			g = &watchGroup{gvk: m.GroupVersionKind, gvr: m.Resource, ns: id.Namespace, ids: map[string]object.ObjMetadata{}}
			groups[key] = g
		}
		g.ids[id.Name] = id
	}
	for _, g := range groups {
		g.list = w.selector(g)
	}
	return groups, unmapped
}

// selector narrows a group's list and watch to its object when alone, else
// to the profile's objects.
func (w *healthWatch) selector(g *watchGroup) metav1.ListOptions {
	if len(g.ids) == 1 {
		for name := range g.ids {
			return metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
		}
	}
	if w.profile != "" {
		return metav1.ListOptions{LabelSelector: LabelProfile + "=" + w.profile}
	}
	return metav1.ListOptions{}
}

// run lists and watches one group until ctx ends, listing again after a
// watch closed or expired; a group that cannot be watched falls back to
// polling.
func (w *healthWatch) run(ctx context.Context, g *watchGroup) {
	for ctx.Err() == nil {
		rv, err := w.list(ctx, g)
		if err == nil {
			err = w.watch(ctx, g, rv)
		}
		switch {
		case ctx.Err() != nil:
			return
		case err == nil, isExpired(err):
			continue // closed or expired: list again
		case cannotWatch(err):
			w.log.Debug("health: kind not watched, polled", "resource", g.gvr.String(), "namespace", g.ns, "error", err)
			w.fallBack(g.objects())
			return
		}
		w.log.Debug("health watch failed", "resource", g.gvr.String(), "namespace", g.ns, "error", err)
		sleepCtx(ctx, w.interval)
	}
}

// cannotWatch reports an error that waiting does not cure: the entry may
// not list or watch the kind, or its API does not serve them.
func cannotWatch(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsNotFound(err) ||
		meta.IsNoMatchError(err)
}

func (g *watchGroup) objects() object.ObjMetadataSet {
	out := make(object.ObjMetadataSet, 0, len(g.ids))
	for _, id := range g.ids {
		out = append(out, id)
	}
	return out
}

// list judges every object of the group as listed (an absent one is
// NotFound) and returns the list's resourceVersion, where the watch starts.
func (w *healthWatch) list(ctx context.Context, g *watchGroup) (string, error) {
	l, err := w.cl.Dynamic.Resource(g.gvr).Namespace(g.ns).List(ctx, g.list)
	if err != nil {
		return "", err
	}
	seen := map[string]bool{}
	for i := range l.Items {
		if _, ok := g.ids[l.Items[i].GetName()]; ok {
			seen[l.Items[i].GetName()] = true
			w.record(ctx, g, &l.Items[i])
		}
	}
	for name, id := range g.ids {
		if !seen[name] {
			w.recordNotFound(id)
		}
	}
	return l.GetResourceVersion(), nil
}

// watch judges the group's objects on every event from resourceVersion rv
// until the watch closes (nil) or fails.
func (w *healthWatch) watch(ctx context.Context, g *watchGroup, rv string) error {
	list, raw, err := w.cl.watches.get()
	if err != nil {
		return err
	}
	lw := newListWatch(list, raw, g.gvr, g.ns, g.list.LabelSelector, g.list.FieldSelector)
	_, err = lw.watch(ctx, rv, func(t watch.EventType, u *unstructured.Unstructured) error {
		id, ok := g.ids[u.GetName()]
		switch {
		case !ok:
		case t == watch.Deleted:
			w.recordNotFound(id)
		default:
			w.record(ctx, g, u)
		}
		return nil
	})
	return err
}

// record judges one object as the server returned it, unless it is older
// than the generation the apply returned (a stale status never counts).
func (w *healthWatch) record(ctx context.Context, g *watchGroup, u *unstructured.Unstructured) {
	if u.GetKind() == "" {
		u.SetGroupVersionKind(g.gvk)
	}
	id := g.ids[u.GetName()]
	if u.GetGeneration() < w.gens[id] {
		return
	}
	if _, err := w.h.ReadStatusForObject(ctx, w.reader, u); err != nil {
		w.log.Debug("health: status of a watched object", "object", id.String(), "error", err)
		return
	}
	w.notify()
}

func (w *healthWatch) recordNotFound(id object.ObjMetadata) {
	w.h.mu.Lock()
	w.h.last[id] = &event.ResourceStatus{Identifier: id, Status: status.NotFoundStatus, Message: "Resource not found"}
	w.h.mu.Unlock()
	w.notify()
}
