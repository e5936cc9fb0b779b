package apply

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options configures a Manager.
type Options struct {
	Client ClientOptions
	// Concurrency is the number of objects dry-run in parallel per apply.
	Concurrency int
	// HealthTimeout bounds the health wait of each step unless the request
	// sets its own (--health-timeout).
	HealthTimeout time.Duration
	// HealthPollInterval is how often, during a wait, the objects of kinds
	// that cannot be watched are read (the others are watched, see
	// health_watch.go), and how often PollHealth should be called.
	HealthPollInterval time.Duration
	// StageTimeout bounds the wait for CRDs, Namespaces and ClusterRoles
	// (and class definitions) before the rest of a step is applied.
	StageTimeout time.Duration
	// OnDrift, when set, receives every drift correction (and failed
	// correction). It is called from the drift watchers' goroutines and
	// must not block for long.
	OnDrift func(DriftEvent)
	// DriftIntervalOnly leaves drift of ContinuousWithDriftDetection
	// profiles to DriftCheck (every --drift-interval) instead of watches
	// that correct it within seconds: no watch, and between passes no
	// connection, is held per cluster (--drift-watches=false).
	DriftIntervalOnly bool
	// Logger receives one line per meaningful event; never credentials.
	Logger *slog.Logger
	// Fleet scopes inventories, ownership labels, prune and withdrawal;
	// the zero Fleet is a cluster's only regatta (see Fleet).
	Fleet Fleet
}

// DefaultOptions returns DefaultClientOptions, 16 objects in flight, a 5 m
// health timeout (kinds that cannot be watched polled every 2 s), and a 1 m
// stage timeout.
func DefaultOptions() Options {
	return Options{Client: DefaultClientOptions(), Concurrency: 16, HealthTimeout: 5 * time.Minute,
		HealthPollInterval: 2 * time.Second, StageTimeout: time.Minute, Logger: slog.New(slog.DiscardHandler)}
}

// Manager applies profiles to the clusters of a fleet. It keeps one client
// and one drift watcher per cluster, and in memory what it applied last (to
// skip unchanged passes and correct drift). Safe for concurrent use.
type Manager struct {
	ctx     context.Context
	cancel  context.CancelFunc
	opts    Options
	clients *ClientCache

	mu       sync.Mutex
	clusters map[string]*Cluster

	// ready is the function PollHealth was last given: health watches call
	// it as soon as an awaiting step turns healthy or degraded.
	readyMu sync.Mutex
	ready   func(cluster string)
}

// NewManager returns a Manager. ctx bounds its background work (drift
// watchers); Close stops it too.
func NewManager(ctx context.Context, opts Options) *Manager {
	def := DefaultOptions()
	if opts.Concurrency <= 0 {
		opts.Concurrency = def.Concurrency
	}
	if opts.HealthTimeout <= 0 {
		opts.HealthTimeout = def.HealthTimeout
	}
	if opts.HealthPollInterval <= 0 {
		opts.HealthPollInterval = def.HealthPollInterval
	}
	if opts.StageTimeout <= 0 {
		opts.StageTimeout = def.StageTimeout
	}
	if opts.Logger == nil {
		opts.Logger = def.Logger
	}
	ctx, cancel := context.WithCancel(ctx)
	return &Manager{ctx: ctx, cancel: cancel, opts: opts,
		clients: NewClientCache(opts.Client), clusters: map[string]*Cluster{}}
}

// Cluster returns the handle of one cluster, reached with the given
// kubeconfig. Call it on every pass with the kubeconfig just read: a changed
// kubeconfig replaces the client (and restarts the cluster's drift watcher).
func (m *Manager) Cluster(name string, kubeconfig []byte) (*Cluster, error) {
	return m.cluster(name, func() (*Client, bool, error) { return m.clients.Get(name, kubeconfig) })
}

// ClusterFor is Cluster for a REST config identified by key (a cloud
// cluster's, whose bearer token renews itself): a changed key replaces
// the client.
func (m *Manager) ClusterFor(name string, cfg *rest.Config, key string) (*Cluster, error) {
	return m.cluster(name, func() (*Client, bool, error) { return m.clients.GetConfig(name, cfg, key) })
}

func (m *Manager) cluster(name string, get func() (*Client, bool, error)) (*Cluster, error) {
	if errs := validation.IsValidLabelValue(name); name == "" || len(errs) > 0 {
		return nil, fmt.Errorf("cluster name %q is not a label value", name)
	}
	client, replaced, err := get()
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.clusters[name]
	if c == nil {
		c = newCluster(m, name, client)
		m.clusters[name] = c
	} else if replaced || c.currentClient() != client {
		c.setClient(client)
	}
	return c, nil
}

// Forget drops a cluster that left the fleet: its client, drift watcher
// and in-memory state. Objects and inventories in the cluster stay.
func (m *Manager) Forget(name string) {
	m.mu.Lock()
	c := m.clusters[name]
	delete(m.clusters, name)
	m.mu.Unlock()
	if c != nil {
		c.stopDrift()
		c.mu.Lock()
		c.dropAllAwaiting()
		c.mu.Unlock()
	}
	m.clients.Delete(name)
}

// Close stops every drift watcher.
func (m *Manager) Close() {
	m.mu.Lock()
	clusters := make([]*Cluster, 0, len(m.clusters))
	for _, c := range m.clusters {
		clusters = append(clusters, c)
	}
	m.mu.Unlock()
	for _, c := range clusters {
		c.stopDrift()
	}
	m.cancel()
}

// Cluster applies profiles to one cluster. Passes of different profiles may
// run concurrently; passes of one profile are serialised.
type Cluster struct {
	m    *Manager
	name string

	mu     sync.Mutex
	client *Client
	drift  *DriftWatcher
	// namespaces are those a namespace-scoped entry reaches; nil: all.
	namespaces []string
	// held is the drift watcher a client change stopped, kept until the
	// new client is known to reach the cluster the entry manages
	// (ResumeDrift).
	held     *DriftWatcher
	profiles map[string]*profileState
	locks    map[string]*sync.Mutex
	// seen are the profiles this Manager applied or tried to on the
	// cluster; a profile it has not seen may be restored from its inventory
	// (canRestore) instead of re-applied.
	seen map[string]bool
	// awaiting are the Async steps waiting for health, by profile.
	awaiting map[string]*awaiting

	// nsMu serialises the first inventory writes until the inventory
	// namespace is known to exist (nsKnown), so concurrent profiles do not
	// each fail and create it.
	nsMu    sync.Mutex
	nsKnown bool

	// listedInvs are the inventories of the last listing; listed says
	// which of them held each object, built on first use (see claimant):
	// only objects without ownership labels need it, so a converged
	// cluster rarely does.
	listedMu   sync.Mutex
	listedInvs []*Inventory
	listed     map[ObjectRef]owner
	// inventories are those of the last full listing (see Inventories).
	inventories inventoryCache
}

// profileState is what this Manager knows of a profile on a cluster.
type profileState struct {
	renderHash string
	healthy    bool
	health     Health
	// applied are the desired hashes of the objects an Applied pass that
	// may skip unchanged objects applied (see manager_unchanged.go).
	applied appliedSet
}

func newCluster(m *Manager, name string, client *Client) *Cluster {
	return &Cluster{
		m:        m,
		name:     name,
		client:   client,
		profiles: map[string]*profileState{},
		locks:    map[string]*sync.Mutex{},
		seen:     map[string]bool{},
		awaiting: map[string]*awaiting{},
	}
}

// Name returns the cluster's name.
func (c *Cluster) Name() string { return c.name }

// Client returns the cluster's current client.
func (c *Cluster) Client() *Client { return c.currentClient() }

// EndPass tells the cluster that a pass over it ended. Without drift
// watches (Options.DriftIntervalOnly) it closes the client's idle
// connections, so that a cluster between passes holds none (the next pass
// dials again); a connection that carries a watch (an event source, a
// health wait) stays open. With drift watches it does nothing.
func (c *Cluster) EndPass() {
	if c.m.opts.DriftIntervalOnly {
		c.currentClient().close()
	}
}

func (c *Cluster) currentClient() *Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.client
}

// Namespaces returns the namespaces a namespace-scoped entry reaches, nil
// for a whole-cluster entry. The slice is not to be modified.
func (c *Cluster) Namespaces() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.namespaces
}

// SetNamespaces makes the cluster namespace-scoped (nil: the whole
// cluster): the entry's credentials reach only these namespaces, its
// inventories and registrations live in them (the first holds the
// inventories) and its drift watches list and watch only them. Callers set
// them right after Manager.Cluster or ClusterFor, on every pass. When they
// change, the drift watcher stops (the next Track starts one with the new
// scope) and the inventory cache and namespace knowledge are dropped.
func (c *Cluster) SetNamespaces(nss []string) {
	c.mu.Lock()
	if slices.Equal(c.namespaces, nss) {
		c.mu.Unlock()
		return
	}
	c.namespaces = slices.Clone(nss)
	c.mu.Unlock()
	c.stopDrift()
	c.inventories.store(nil)
	c.nsMu.Lock()
	c.nsKnown = false
	c.nsMu.Unlock()
}

// setClient swaps the client and stops the drift watcher: a kubeconfig
// now pointing at another cluster must not carry the old desired state
// there. ResumeDrift moves it to the new client once the entry's pass has
// confirmed what the client reaches.
func (c *Cluster) setClient(client *Client) {
	c.mu.Lock()
	c.client = client
	old := c.drift
	c.drift = nil
	if old != nil {
		c.held = old
	}
	c.mu.Unlock()
	if old != nil {
		old.Stop()
	}
}

// ResumeDrift restarts on the current client the drift watcher a client
// change stopped (same desired state and counts). The reconciler calls it
// when the pass has confirmed that the entry manages what the new client
// reaches (after a token rotation, say); a refused entry is forgotten
// instead.
func (c *Cluster) ResumeDrift() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resumeDrift()
}

// resumeDrift is ResumeDrift with c.mu held.
func (c *Cluster) resumeDrift() {
	if c.held == nil || c.drift != nil || c.m.ctx.Err() != nil {
		return
	}
	c.drift = c.held.restart(c.m.ctx, c.client, c.m.opts)
	c.held = nil
}

// Pause stops every background change to a paused cluster: its drift
// watcher stops and the Manager forgets what it applied, so the first pass
// after the pause applies in full (and resumes drift correction). The
// reconciler calls it on every pass of a paused cluster and reports
// StatePaused itself; objects and inventories stay as they are.
func (c *Cluster) Pause() {
	c.stopDrift()
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.profiles)
	c.dropAllAwaiting()
}

func (c *Cluster) stopDrift() {
	c.mu.Lock()
	w := c.drift
	c.drift, c.held = nil, nil
	c.mu.Unlock()
	if w != nil {
		w.Stop()
	}
}

// lockProfile serialises passes of one profile.
func (c *Cluster) lockProfile(profile string) func() {
	c.mu.Lock()
	l := c.locks[profile]
	if l == nil {
		l = &sync.Mutex{}
		c.locks[profile] = l
	}
	c.mu.Unlock()
	l.Lock()
	return l.Unlock
}

func (c *Cluster) state(profile string) *profileState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.profiles[profile]; s != nil {
		cp := *s
		return &cp
	}
	return nil
}

// sawProfile reports whether this Manager passed the profile on the
// cluster since it started.
func (c *Cluster) sawProfile(profile string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[profile]
}

func (c *Cluster) setState(profile string, s *profileState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[profile] = true
	if s == nil {
		delete(c.profiles, profile)
		return
	}
	c.profiles[profile] = s
}

// Inventories lists the profiles that have an inventory in the cluster (what
// a restarted daemon needs to decide withdrawals). When no inventory
// changed since the last listing, only their metadata is read.
func (c *Cluster) Inventories(ctx context.Context) ([]*Inventory, error) {
	kube := c.currentClient().Kube
	invs, unchanged, written, err := c.inventories.unchanged(ctx, kube, c.fleet())
	switch {
	case err == nil && !unchanged:
		if invs, err = listInventories(ctx, kube, c.fleet(), &c.inventories); err == nil {
			c.remember(invs)
		}
	case err == nil && written:
		c.remember(invs) // this Manager's own writes: no need to read them
	}
	return invs, c.wrap(ctx, err)
}

// Inventory returns one profile's inventory, nil when it has none.
func (c *Cluster) Inventory(ctx context.Context, profile string) (*Inventory, error) {
	inv, err := readInventory(ctx, c.currentClient().Kube, c.fleet(), profile)
	return inv, c.wrap(ctx, err)
}

// wrap names the cluster in an error and classifies transport failures.
func (c *Cluster) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("cluster %s: %w", c.name, unreachable(ctx, c.name, err))
}

func (c *Cluster) log() *slog.Logger { return c.m.opts.Logger.With("cluster", c.name) }

// ensureInventoryNamespace creates the inventory namespace before the first
// inventory write of the cluster, unless an inventory was seen (then it
// exists). writeInventory still creates it when it was deleted since.
func (c *Cluster) ensureInventoryNamespace(ctx context.Context, kube client.Client, seen bool) error {
	c.nsMu.Lock()
	defer c.nsMu.Unlock()
	if c.nsKnown || len(c.Namespaces()) > 0 {
		return nil // a namespace-scoped entry's namespaces exist or the apply fails
	}
	if !seen {
		if err := ensureNamespace(ctx, kube, InventoryNamespace); err != nil {
			return fmt.Errorf("create namespace %s: %w", InventoryNamespace, err)
		}
	}
	c.nsKnown = true
	return nil
}

// resourceManager returns an ssa ResourceManager that writes as regatta's
// field manager through kube, with concurrency requests in flight. It has
// no status poller: regatta never calls ssa's waits, health is watched
// (health_watch.go).
func resourceManager(kube client.Client, concurrency int) *ssa.ResourceManager {
	rm := ssa.NewResourceManager(kube, nil, ssa.Owner{Field: FieldManager, Group: "regatta.dev"})
	rm.SetConcurrency(concurrency)
	return rm
}
