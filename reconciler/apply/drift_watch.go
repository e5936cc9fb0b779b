package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unique"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DriftEvent reports one drift correction, or a failed one (Err set).
type DriftEvent struct {
	Cluster string
	Profile string
	Object  ObjectRef
	// Action is ActionCreated for an object that was deleted out of band,
	// ActionConfigured for one that was changed.
	Action Action
	Err    error
	Time   time.Time
}

// driftWorkers is the most goroutines correcting drift per cluster at
// once (none while nothing is queued, see driftQueue).
const driftWorkers = 2

// DriftWatcher corrects drift on one cluster: one label-filtered informer per
// kind applied (objects whose regatta.dev/profile label names one of the
// drift-detected profiles, see widen), and a work queue of
// (profile, object) keys whose live state is compared with the desired state
// kept in memory. Safe for concurrent use.
type DriftWatcher struct {
	cluster string
	fleet   Fleet
	// namespaces are those of a namespace-scoped entry: one informer per
	// kind and namespace, never a cluster-wide list or watch. nil: one
	// informer per kind across namespaces.
	namespaces []string
	client     *Client
	rm         *ssa.ResourceManager
	onDrift    func(DriftEvent)
	log        *slog.Logger
	// syncTimeout bounds the wait for new watches to list.
	syncTimeout time.Duration
	// intervalOnly: no watches; DriftCheck alone compares and corrects
	// (Options.DriftIntervalOnly).
	intervalOnly bool

	ctx    context.Context
	cancel context.CancelFunc
	queue  *driftQueue
	wg     sync.WaitGroup

	// watchMu serializes changes of the informers (informerFor, rescope).
	watchMu sync.Mutex
	// scope are the profiles the watches select (sorted; guarded by
	// watchMu): the plan's drift-detected ones and those tracked or
	// expected, as of the last rescoping.
	scope []string

	mu       sync.Mutex
	profiles map[string]*driftProfile
	// retired are the desired states Untrack removed, by profile (a pass
	// untracks the profile it applies until it ends), so that Track keeps
	// what is known in sync of objects that did not change. At most one per
	// profile ever tracked on the cluster.
	retired map[string]*driftProfile
	// informers are each kind's, one per namespace of watchNamespaces in
	// its order.
	informers map[schema.GroupKind][]*Informer
	// leases hold the informers in the client's shared registry.
	leases  map[schema.GroupKind][]*InformerLease
	counts  map[string]int
	failing map[driftKey]bool
	// expected are drift-detected profiles being applied, not tracked yet:
	// the watches keep their objects whole, so tracking them needs no reads.
	expected map[string]bool
	// scoped is the set of w.scope, for slim (which must not take watchMu).
	scoped map[string]bool
}

// driftProfile is the desired state of one profile's tracked objects.
type driftProfile struct {
	objects  map[ObjectRef]*desiredObject // by ref.key()
	rules    []jsondiff.IgnoreRule
	compiled jsondiff.CompiledIgnoreRules
	// user is who corrections are written as (Request.Impersonate).
	user string
}

// desiredObject is the desired state of one tracked object, kept as JSON
// (a third of the memory of its unstructured form) and interned: clusters
// that hold the same render of an add-on share one copy of each object.
// object decodes a copy.
type desiredObject struct {
	version  string // ObjectRef keys have none
	disabled bool   // drift detection off by annotation
	raw      unique.Handle[string]
	// synced is the live resourceVersion the object was last found in sync
	// at; the object needs no comparison while it keeps it (every write
	// changes it).
	synced atomic.Pointer[string]
}

func (d *desiredObject) inSyncAt(rv string) bool {
	s := d.synced.Load()
	return s != nil && rv != "" && *s == rv
}

func (d *desiredObject) markInSync(rv string) { d.synced.Store(&rv) }

func newDesiredObject(o *unstructured.Unstructured) (*desiredObject, error) {
	raw, err := o.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RefOf(o), err)
	}
	return &desiredObject{version: o.GroupVersionKind().Version, disabled: driftDisabled(o), raw: unique.Make(string(raw))}, nil
}

func (d *desiredObject) object() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(d.raw.Value())); err != nil {
		return nil, fmt.Errorf("desired state: %w", err)
	}
	return u, nil
}

// gvk returns the group, version and kind of the object of ref.
func (d *desiredObject) gvk(ref ObjectRef) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: ref.Group, Version: d.version, Kind: ref.Kind}
}

type driftKey struct {
	profile string
	ref     ObjectRef // ref.key(): no version
}

// newDriftWatcher returns a watcher; its workers start with the first key
// queued, its informers with the first Track.
func newDriftWatcher(parent context.Context, cluster string, namespaces []string, cl *Client, opts Options) *DriftWatcher {
	ctx, cancel := context.WithCancel(parent)
	w := &DriftWatcher{cluster: cluster, fleet: opts.Fleet, namespaces: namespaces, client: cl, onDrift: opts.OnDrift, syncTimeout: opts.StageTimeout,
		intervalOnly: opts.DriftIntervalOnly, log: opts.Logger.With("cluster", cluster), ctx: ctx, cancel: cancel,
		rm:       resourceManager(cl.Kube, opts.Concurrency),
		profiles: map[string]*driftProfile{}, retired: map[string]*driftProfile{}, informers: map[schema.GroupKind][]*Informer{},
		leases: map[schema.GroupKind][]*InformerLease{}, counts: map[string]int{}, failing: map[driftKey]bool{}, expected: map[string]bool{}}
	w.queue = newDriftQueue(driftWorkers, &w.wg, w.handle)
	return w
}

// Stop stops the informers and workers and waits for them.
func (w *DriftWatcher) Stop() {
	w.cancel()
	w.queue.shutDown()
	w.mu.Lock()
	leases := w.leases
	w.leases = map[schema.GroupKind][]*InformerLease{}
	w.mu.Unlock()
	for _, ls := range leases {
		for _, l := range ls {
			l.Release()
		}
	}
	w.wg.Wait()
}

// Track replaces the desired state of a profile and watches its kinds. Once
// the new watches have listed (in the background), every object is compared
// once. Without watches (intervalOnly) the next DriftCheck compares them.
// Either way an object is known in sync at the resourceVersion applied
// gives it (by ObjectRef key: the apply that left it made it as desired),
// or, unchanged since the profile was last tracked, where it was found in
// sync then.
func (w *DriftWatcher) Track(profile, user string, objs []*unstructured.Unstructured, rules []jsondiff.IgnoreRule,
	applied map[ObjectRef]string) error {
	dp, err := newDriftProfile(objs, rules)
	if err != nil {
		return err
	}
	dp.user = user
	kinds, err := w.watchKinds(profile, objs)
	refs := slices.Collect(maps.Keys(dp.objects)) // before workers may forget some
	w.mu.Lock()
	dp.inherit(cmp.Or(w.profiles[profile], w.retired[profile]), applied)
	w.profiles[profile] = dp
	delete(w.retired, profile)
	delete(w.expected, profile)
	w.mu.Unlock()
	if err != nil || w.intervalOnly {
		return err
	}
	w.wg.Go(func() { w.compareWhenSynced(profile, dp, refs, kinds) })
	return nil
}

// compareWhenSynced waits for the profile's watches to list, then queues
// every object for one comparison. It runs apart from the pass that
// tracked the profile, so a slow first list does not hold the pass up;
// watches that do not sync untrack the profile (when nothing replaced it
// meanwhile), and the next pass re-applies it in full.
func (w *DriftWatcher) compareWhenSynced(profile string, dp *driftProfile, refs []ObjectRef, kinds []schema.GroupKind) {
	ctx, cancel := context.WithTimeout(w.ctx, w.syncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), func() bool { return w.kindsSynced(kinds) }) {
		if w.ctx.Err() != nil {
			return // stopped
		}
		w.mu.Lock()
		if w.profiles[profile] == dp {
			delete(w.profiles, profile)
		}
		w.mu.Unlock()
		w.log.Error("drift watches did not sync (list and watch across namespaces allowed?); the next pass re-applies",
			"profile", profile, "error", context.Cause(ctx))
		return
	}
	for _, ref := range refs {
		w.queue.add(driftKey{profile: profile, ref: ref})
	}
}

// inherit marks in sync the objects applied left at a resourceVersion,
// and those old (the profile's previous desired state, nil: none) wanted
// the same way, at the resourceVersion old found them in sync at.
func (dp *driftProfile) inherit(old *driftProfile, applied map[ObjectRef]string) {
	for ref, d := range dp.objects {
		if rv := applied[ref]; rv != "" {
			d.markInSync(rv)
			continue
		}
		if old == nil {
			continue
		}
		if o := old.objects[ref]; o != nil && o.raw == d.raw && o.version == d.version && o.disabled == d.disabled {
			if rv := o.synced.Load(); rv != nil {
				d.markInSync(*rv)
			}
		}
	}
}

func newDriftProfile(objs []*unstructured.Unstructured, rules []jsondiff.IgnoreRule) (*driftProfile, error) {
	compiled, err := jsondiff.CompileIgnoreRules(rules)
	if err != nil {
		return nil, fmt.Errorf("drift exclusions: %w", err)
	}
	dp := &driftProfile{objects: make(map[ObjectRef]*desiredObject, len(objs)), rules: rules, compiled: compiled}
	for _, o := range objs {
		d, err := newDesiredObject(o)
		if err != nil {
			return nil, err
		}
		dp.objects[RefOf(o).key()] = d
	}
	return dp, nil
}

// watchKinds makes sure an informer that selects profile runs for the kind
// of every object, and returns the kinds. Without watches (intervalOnly)
// it only adds profile to the scope DriftCheck lists.
func (w *DriftWatcher) watchKinds(profile string, objs []*unstructured.Unstructured) ([]schema.GroupKind, error) {
	w.watchMu.Lock()
	defer w.watchMu.Unlock()
	w.widen(profile)
	if w.intervalOnly {
		return nil, nil
	}
	var kinds []schema.GroupKind
	var errs []error
	seen := map[schema.GroupKind]bool{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if seen[gvk.GroupKind()] {
			continue
		}
		seen[gvk.GroupKind()] = true
		if err := w.informerFor(gvk); err != nil {
			errs = append(errs, err)
			continue
		}
		kinds = append(kinds, gvk.GroupKind())
	}
	return kinds, errors.Join(errs...)
}

// kindsSynced reports whether the informers of kinds have listed. It asks
// the informers running now: a widening may have replaced those the kinds
// had when a profile was tracked (the replaced ones never sync).
func (w *DriftWatcher) kindsSynced(kinds []schema.GroupKind) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, gk := range kinds {
		infs := w.informers[gk]
		if len(infs) == 0 || !allSynced(infs) {
			return false
		}
	}
	return true
}

func allSynced(infs []*Informer) bool {
	for _, inf := range infs {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// watchNamespaces are the namespaces of the watches: the entry's, or ""
// (every namespace).
func (w *DriftWatcher) watchNamespaces() []string {
	if len(w.namespaces) > 0 {
		return w.namespaces
	}
	return []string{""}
}

// informerFor makes sure the informers of a kind run, starting them on
// first use; w.watchMu is held.
func (w *DriftWatcher) informerFor(gvk schema.GroupVersionKind) error {
	w.mu.Lock()
	running := len(w.informers[gvk.GroupKind()]) > 0
	w.mu.Unlock()
	if running {
		return nil
	}
	mapping, err := w.client.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("watch %s: %w", gvk.Kind, err)
	}
	return w.startInformer(gvk.GroupKind(), mapping.Resource)
}

// startInformer acquires the informers of a kind's resource for the
// current scope (one per watch namespace) and puts them in place of the
// kind's previous ones, which it releases; w.watchMu is held.
func (w *DriftWatcher) startInformer(gk schema.GroupKind, gvr schema.GroupVersionResource) error {
	var leases []*InformerLease
	for _, ns := range w.watchNamespaces() {
		lease, err := w.client.Informers().Acquire(w.informerKey(gvr, ns), w.slim, w.handler())
		if err != nil {
			for _, l := range leases {
				go l.Release()
			}
			return fmt.Errorf("watch %s: %w", gk.Kind, err)
		}
		leases = append(leases, lease)
	}
	infs := make([]*Informer, len(leases))
	for i, l := range leases {
		infs[i] = l.Informer
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() != nil {
		releaseAll(leases) // the watcher stopped
		return nil
	}
	releaseAll(w.leases[gk]) // in the background: waits for the informers to end
	w.informers[gk] = infs
	w.leases[gk] = leases
	return nil
}

// releaseAll releases leases in the background.
func releaseAll(leases []*InformerLease) {
	for _, l := range leases {
		go l.Release()
	}
}

// maxScopedProfiles bounds the profile names a watch's label selector
// lists; past it the watches select every object labelled
// regatta.dev/profile.
const maxScopedProfiles = 64

// widen adds profile to the scope of the watches (see rescope) unless they
// select it already; w.watchMu is held. Profiles that stop being tracked
// stay in the scope until the next Scope: their objects reach the handler,
// which finds no tracker for them, and slim keeps only their identity.
func (w *DriftWatcher) widen(profile string) {
	if slices.Contains(w.scope, profile) || len(w.scope) > maxScopedProfiles {
		return
	}
	w.rescope(append(slices.Clone(w.scope), profile))
}

// Scope sets the profiles the watches select to the drift-detected
// profiles of the cluster's plan, before they are applied, so that the
// watches start with the whole selection instead of widening (and listing
// again) as each profile arrives. Profiles tracked or expected stay
// selected; a scope that does not change restarts nothing.
func (w *DriftWatcher) Scope(profiles []string) {
	w.watchMu.Lock()
	defer w.watchMu.Unlock()
	w.rescope(profiles)
}

// rescope makes names, and every profile tracked or expected, the scope of
// the watches, restarting each running informer with the new selector (one
// list per kind) when the selection changed; w.watchMu is held.
func (w *DriftWatcher) rescope(names []string) {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	w.mu.Lock()
	for n := range w.profiles {
		set[n] = true
	}
	for n := range w.expected {
		set[n] = true
	}
	running := maps.Clone(w.leases)
	w.mu.Unlock()
	scope, was := slices.Sorted(maps.Keys(set)), w.scope
	w.scope = scope
	w.mu.Lock()
	w.scoped = set
	w.mu.Unlock()
	if scopeSelector(scope) == scopeSelector(was) {
		return // past maxScopedProfiles, both select every labelled object
	}
	w.log.Debug("drift watches rescoped", "profiles", scope, "kinds", len(running))
	for gk, ls := range running {
		if err := w.startInformer(gk, ls[0].key.Resource); err != nil {
			w.log.Error("drift watch not rescoped; the drift check still lists the kind", "kind", gk.Kind, "error", err)
		}
	}
}

// informerKey is the shared-registry key of a drift watch: objects of the
// scope's profiles (label regatta.dev/profile) in every namespace, in this
// watcher's reduced form (slim depends on what it tracks, so its view is
// its own). w.watchMu is held.
func (w *DriftWatcher) informerKey(gvr schema.GroupVersionResource, ns string) InformerKey {
	return InformerKey{Resource: gvr, Namespace: ns, LabelSelector: scopeSelector(w.scope), View: fmt.Sprintf("drift/%p", w)}
}

// scopeSelector selects the objects of the named profiles; every object
// labelled regatta.dev/profile when there are none or too many to list.
// Profile names are label values, so they need no quoting.
func scopeSelector(profiles []string) string {
	if len(profiles) == 0 || len(profiles) > maxScopedProfiles {
		return LabelProfile
	}
	return LabelProfile + " in (" + strings.Join(profiles, ",") + ")"
}

// Untrack stops correcting a profile's objects (its watches stay: they are
// shared by kind).
func (w *DriftWatcher) Untrack(profile string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if dp := w.profiles[profile]; dp != nil {
		w.retired[profile] = dp
	}
	delete(w.profiles, profile)
	delete(w.expected, profile)
	for k := range w.failing {
		if k.profile == profile {
			delete(w.failing, k)
		}
	}
}

// HasSynced reports whether every watch of the watcher has listed.
func (w *DriftWatcher) HasSynced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, infs := range w.informers {
		if !allSynced(infs) {
			return false
		}
	}
	return true
}

// Tracked reports whether the watcher corrects a profile.
func (w *DriftWatcher) Tracked(profile string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.profiles[profile] != nil
}

// Corrections returns the number of corrections made for a profile.
func (w *DriftWatcher) Corrections(profile string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts[profile]
}

// Pending reports whether a correction of the profile failed and waits for
// a retry.
func (w *DriftWatcher) Pending(profile string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.failing {
		if k.profile == profile {
			return true
		}
	}
	return false
}

// restart returns a watcher on a new client with the same desired state and
// counts; it re-tracks in the background. parent bounds the new watcher.
func (w *DriftWatcher) restart(parent context.Context, cl *Client, opts Options) *DriftWatcher {
	nw := newDriftWatcher(parent, w.cluster, w.namespaces, cl, opts)
	w.watchMu.Lock()
	nw.scope = slices.Clone(w.scope) // the re-tracks below start with the whole selection
	nw.scoped = map[string]bool{}
	for _, n := range nw.scope {
		nw.scoped[n] = true
	}
	w.watchMu.Unlock()
	w.mu.Lock()
	profiles := maps.Clone(w.profiles)
	desired := map[string][]*desiredObject{}
	for name, dp := range profiles {
		desired[name] = dp.list()
	}
	nw.counts = maps.Clone(w.counts)
	w.mu.Unlock()
	nw.wg.Go(func() {
		for name, dp := range profiles {
			objs, err := decode(desired[name])
			if err == nil {
				err = nw.Track(name, dp.user, objs, dp.rules, nil)
			}
			if err != nil {
				nw.log.Error("drift re-track failed", "profile", name, "error", err)
			}
		}
	})
	return nw
}

func (w *DriftWatcher) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    w.onEvent,
		UpdateFunc: func(old, cur any) { w.onEvent(old); w.onEvent(cur) },
		DeleteFunc: w.onEvent,
	}
}

// onEvent queues the key of a tracked object.
func (w *DriftWatcher) onEvent(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	ref, ok := eventRef(obj)
	if !ok {
		return
	}
	for _, profile := range w.trackers(ref) {
		w.queue.add(driftKey{profile: profile, ref: ref})
	}
}

// eventRef returns the key of an informer's object: a whole one or a stub.
func eventRef(obj any) (ObjectRef, bool) {
	o, ok := obj.(interface {
		metav1.Object
		GetObjectKind() schema.ObjectKind
	})
	if !ok {
		return ObjectRef{}, false
	}
	gvk := o.GetObjectKind().GroupVersionKind()
	return ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}, true
}

// slim is the informers' transform: it keeps in memory only what reconcile
// compares. An object a profile tracks keeps its body, labels and
// annotations (no status, managedFields or other metadata), encoded as
// JSON beside its identity (slimObject: one allocation instead of a tree
// of maps, which would pin the memory of the decoded watch event around
// it); any other object of a watched kind (another profile's, or one not
// yet tracked) shrinks to a stub of its identity, which cached never
// returns: reconcile reads such an object from the API server.
// Idempotent, as client-go asks.
func (w *DriftWatcher) slim(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil // slim already
	}
	if !w.tracked(RefOf(u).key()) && !w.expecting(u.GetLabels()[LabelProfile]) {
		return stubOf(u), nil
	}
	delete(u.Object, "status")
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		for k := range md {
			if !cachedMetadata[k] {
				delete(md, k)
			}
		}
	}
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RefOf(u), err)
	}
	return &slimObject{PartialObjectMetadata: *stubOf(u), raw: raw}, nil
}

// slimObject is a tracked object as the drift watches keep it.
type slimObject struct {
	metav1.PartialObjectMetadata
	raw []byte // the slimmed object
}

// object decodes a copy of the slimmed object.
func (o *slimObject) object() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(o.raw); err != nil {
		return nil, fmt.Errorf("cached %s/%s: %w", o.Namespace, o.Name, err)
	}
	return u, nil
}

// cachedMetadata are the metadata fields slim keeps of a tracked object.
var cachedMetadata = map[string]bool{"name": true, "namespace": true, "labels": true, "annotations": true,
	"resourceVersion": true, "uid": true, "deletionTimestamp": true}

// stubOf returns the identity of an object, as the informers keep objects
// no profile tracks.
func stubOf(u *unstructured.Unstructured) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(),
			ResourceVersion: u.GetResourceVersion()}}
}

// Expect says a drift-detected profile is being applied and will be
// tracked when its pass finishes (Track), or not (Untrack).
func (w *DriftWatcher) Expect(profile string) {
	w.mu.Lock()
	w.expected[profile] = true
	w.mu.Unlock()
	w.watchMu.Lock()
	defer w.watchMu.Unlock()
	w.widen(profile) // its objects are seen whole as they are applied
}

// expecting reports whether the watches keep a profile's objects whole
// before it is tracked: it is being applied, or the scope names it (it
// will be tracked, e.g. restored after a restart, and its objects listed
// now need no read then).
func (w *DriftWatcher) expecting(profile string) bool {
	if profile == "" {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.expected[profile] || w.scoped[profile]
}

// tracked reports whether a profile tracks an object.
func (w *DriftWatcher) tracked(ref ObjectRef) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, dp := range w.profiles {
		if dp.objects[ref] != nil {
			return true
		}
	}
	return false
}

// trackers returns the profiles that track an object. It does not go by
// the event's label: an object whose label was removed leaves the watch
// with a deletion event that no longer names its profile.
func (w *DriftWatcher) trackers(ref ObjectRef) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for name, dp := range w.profiles {
		if dp.objects[ref] != nil {
			out = append(out, name)
		}
	}
	return out
}

// list returns the desired objects. Call it with w.mu held (forget
// deletes keys).
func (dp *driftProfile) list() []*desiredObject {
	return slices.Collect(maps.Values(dp.objects))
}

// decode returns copies of desired objects.
func decode(ds []*desiredObject) ([]*unstructured.Unstructured, error) {
	objs := make([]*unstructured.Unstructured, 0, len(ds))
	for _, d := range ds {
		o, err := d.object()
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// desired returns the desired object of a key and its profile; nil when
// no longer tracked.
func (w *DriftWatcher) desired(key driftKey) (*desiredObject, *driftProfile) {
	w.mu.Lock()
	defer w.mu.Unlock()
	dp := w.profiles[key.profile]
	if dp == nil || dp.objects[key.ref] == nil {
		return nil, nil
	}
	return dp.objects[key.ref], dp
}

// handle reconciles one key; an error (the watcher still running) has the
// queue retry it with backoff.
func (w *DriftWatcher) handle(key driftKey) error {
	err := w.reconcile(w.ctx, key)
	w.mu.Lock()
	if err != nil && w.profiles[key.profile] != nil {
		w.failing[key] = true
	} else {
		delete(w.failing, key)
	}
	w.mu.Unlock()
	if w.ctx.Err() != nil {
		return nil
	}
	return err
}

// reconcile compares one object with its desired state and re-applies it
// when it was deleted or its fields drifted.
func (w *DriftWatcher) reconcile(ctx context.Context, key driftKey) error {
	d, dp := w.desired(key)
	if d == nil || d.disabled {
		return nil
	}
	want, err := d.object()
	if err != nil {
		return err
	}
	live, err := w.live(ctx, key, want.GroupVersionKind())
	if err != nil {
		return err
	}
	switch owner := live.GetLabels()[LabelProfile]; {
	case live.Object == nil: // gone
	case owner == key.profile && w.fleet.owns(live.GetLabels()):
		if driftDisabled(live) || !differs(want, live, dp.compiled) {
			d.markInSync(live.GetResourceVersion())
			return nil
		}
	default:
		moved, err := newClaims(w.client.Kube, w.fleet).claimed(ctx, key.ref, live.GetLabels())
		if err != nil {
			return err
		}
		if moved {
			w.forget(key) // taken over by a profile whose inventory lists it
			return nil
		}
		// else the labels drifted: restore them with the object
	}
	return w.correct(ctx, key, want, dp)
}

// live returns the live object of a key: the informer's copy when it holds
// the whole object labelled with the key's profile, else the API server's
// (which the informer may not have seen yet, or holds as a stub). An object
// that is gone is returned empty (nil Object).
func (w *DriftWatcher) live(ctx context.Context, key driftKey, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	if u := w.cached(key.ref, ""); u != nil && u.GetLabels()[LabelProfile] == key.profile {
		return u, nil
	}
	u, err := w.read(ctx, key.ref, gvk)
	if u == nil && err == nil {
		return &unstructured.Unstructured{}, nil
	}
	return u, err
}

// read gets an object from the API server; nil when it is gone.
func (w *DriftWatcher) read(ctx context.Context, ref ObjectRef, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := w.client.Kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, &ObjectError{Object: ref, Op: "get", Err: err}
	}
	return u, nil
}

// cached returns a copy of the whole object in the informer's store, at
// resourceVersion rv unless rv is empty; nil when it is absent, a stub
// (see slim) or at another version (then it is not decoded).
func (w *DriftWatcher) cached(ref ObjectRef, rv string) *unstructured.Unstructured {
	inf := w.informerOf(ref)
	if inf == nil {
		return nil
	}
	key := ref.Name
	if ref.Namespace != "" {
		key = ref.Namespace + "/" + ref.Name
	}
	obj, ok := inf.GetByKey(key)
	if !ok {
		return nil
	}
	so, ok := obj.(*slimObject)
	if !ok || rv != "" && so.ResourceVersion != rv {
		return nil // a stub, or another version
	}
	u, err := so.object()
	if err != nil {
		w.log.Error("drift watch cache", "error", err)
		return nil // read from the API server instead
	}
	return u
}

// informerOf returns the informer that watches ref's namespace, nil when
// none does.
func (w *DriftWatcher) informerOf(ref ObjectRef) *Informer {
	w.mu.Lock()
	defer w.mu.Unlock()
	infs := w.informers[ref.GroupVersionKind().GroupKind()]
	if len(w.namespaces) == 0 {
		if len(infs) == 0 {
			return nil
		}
		return infs[0]
	}
	if i := slices.Index(w.namespaces, ref.Namespace); i >= 0 && i < len(infs) {
		return infs[i]
	}
	return nil
}

func (w *DriftWatcher) forget(key driftKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if dp := w.profiles[key.profile]; dp != nil {
		delete(dp.objects, key.ref)
	}
}

// correct re-applies the desired object; ssa applies it only when its
// dry-run differs from the live object (ignoring the exclusions).
func (w *DriftWatcher) correct(ctx context.Context, key driftKey, want *unstructured.Unstructured, dp *driftProfile) error {
	ev := DriftEvent{Cluster: w.cluster, Profile: key.profile, Object: RefOf(want), Time: time.Now()}
	rm, err := w.writer(dp.user)
	var entry *ssa.ChangeSetEntry
	if err == nil {
		entry, err = rm.Apply(ctx, want, driftApplyOptions(dp.rules))
	}
	if err != nil {
		ev.Err = &ObjectError{Object: ev.Object, Op: "drift correction", Err: err}
		w.report(ev)
		return ev.Err
	}
	if entry.Action != ssa.CreatedAction && entry.Action != ssa.ConfiguredAction {
		return nil
	}
	ev.Action = Action(entry.Action)
	w.mu.Lock()
	w.counts[key.profile]++
	w.mu.Unlock()
	w.report(ev)
	return nil
}

// writer is the resource manager corrections of a profile written as user
// go through: the watcher's own for regatta's identity.
func (w *DriftWatcher) writer(user string) (*ssa.ResourceManager, error) {
	if user == "" {
		return w.rm, nil
	}
	c, err := w.client.As(user)
	if err != nil {
		return nil, err
	}
	return resourceManager(c.Kube, 1), nil // a correction is a few objects
}

func driftApplyOptions(rules []jsondiff.IgnoreRule) ssa.ApplyOptions {
	opts := ssa.DefaultApplyOptions()
	opts.DriftIgnoreRules = rules
	opts.ExclusionSelector = map[string]string{AnnotationDriftDetection: Disabled}
	return opts
}

func (w *DriftWatcher) report(ev DriftEvent) {
	if ev.Err != nil {
		w.log.Error("drift correction failed", "profile", ev.Profile, "object", ev.Object.String(), "error", ev.Err)
	} else {
		w.log.Info("drift corrected", "profile", ev.Profile, "object", ev.Object.String(), "action", ev.Action)
	}
	if w.onDrift != nil {
		w.onDrift(ev)
	}
}

func driftDisabled(obj *unstructured.Unstructured) bool {
	return obj.GetAnnotations()[AnnotationDriftDetection] == Disabled
}
