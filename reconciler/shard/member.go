package shard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// GroupLabel marks the membership Leases of one group of replicas; its
// value is Options.Group.
const GroupLabel = "regatta.dev/shard-group"

// DefaultLeaseDuration is how long a member's Lease holds without renewal.
const DefaultLeaseDuration = 15 * time.Second

// ErrOptions reports invalid membership options.
var ErrOptions = errors.New("shard: invalid options")

// Options configures a Member.
type Options struct {
	// Leases is the coordination.k8s.io/v1 client of the management cluster.
	Leases coordclient.LeasesGetter
	// Namespace of the membership Leases.
	Namespace string
	// Group names the replicas that share one fleet (default "regatta").
	Group string
	// Identity is this replica's name, unique in the group: a DNS
	// subdomain, e.g. the pod name of a StatefulSet replica.
	Identity string
	// LeaseDuration (default 15s): a member whose Lease was not seen
	// renewed for this long is gone; a member stops working after half of
	// it without a renewal of its own.
	LeaseDuration time.Duration
	// OnChange is called, off the renewal loop's lock, whenever what this
	// member owns may have changed: members joined or left, or its own
	// Lease turned fresh or stale.
	OnChange func()
	// Keys lists the keys (clusters) to share, e.g. the clusters of the
	// revision in force; it is read every round. Only these keys (and
	// FleetKey) are ever owned. Members that list different keys (on
	// different revisions) may assign a key differently: the claims
	// still let only one of them work on it.
	Keys    func() []string
	Metrics *Metrics
	Log     *slog.Logger
}

// Member is one replica's membership: it renews its own Lease, watches
// the others' and answers Owns.
type Member struct {
	opts     Options
	name     string // of the own Lease
	interval time.Duration

	mu      sync.Mutex
	lease   *coordinationv1.Lease // own, as last written
	fresh   time.Time             // start of the last round that renewed and listed
	joined  time.Time             // start of the first such round
	members []string              // live members, sorted, self included
	seen    map[string]observed   // other members by identity
	listed  map[string]bool       // identities in the last listing
	sig     string                // of the last OnChange

	assigned map[string]string    // owner of every key, by the last round
	target   map[string]bool      // keys assigned to this member
	written  map[string]bool      // owns claimed by the last renewal
	draining map[string]time.Time // keys lost, claimed until drainFor passed
	working  map[string]bool      // target, claimed, and claimed by no other
	gen      uint64               // counts changes of working
	refused  bool                 // Owns said no to a working key since the last notify
}

// observed is what this member saw of another member's Lease.
type observed struct {
	version string    // resourceVersion last seen
	at      time.Time // local time it was first seen at that version
	dead    bool      // expired at that version
	claims  claims    // as advertised at that version
	all     bool      // advertises no claims: taken to claim every key
}

// New checks the options and returns a Member; Run starts it.
func New(opts Options) (*Member, error) {
	if opts.Leases == nil || opts.Namespace == "" {
		return nil, fmt.Errorf("%w: a Leases client and a namespace are required", ErrOptions)
	}
	if errs := validation.IsDNS1123Subdomain(opts.Identity); len(errs) > 0 {
		return nil, fmt.Errorf("%w: identity %q: %s", ErrOptions, opts.Identity, errs[0])
	}
	if opts.Group == "" {
		opts.Group = "regatta"
	}
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	if opts.LeaseDuration < time.Second {
		return nil, fmt.Errorf("%w: lease duration %s is below 1s", ErrOptions, opts.LeaseDuration)
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	name := opts.Group + "-" + opts.Identity
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("%w: Lease name %q: %s", ErrOptions, name, errs[0])
	}
	return &Member{
		opts:     opts,
		name:     name,
		interval: min(2*time.Second, opts.LeaseDuration/5),
		seen:     map[string]observed{},
		draining: map[string]time.Time{},
	}, nil
}

// Identity is this member's name.
func (m *Member) Identity() string { return m.opts.Identity }

// LeaseDuration is the lease duration in effect.
func (m *Member) LeaseDuration() time.Duration { return m.opts.LeaseDuration }

// Owns reports whether this member may work on key now: its own Lease is
// fresh (renewed less than half a lease duration ago), it has been a
// member for at least one lease duration, key is assigned to it, its
// Lease claimed key before the last listing of the members, and that
// listing showed no other live member claiming key (see the package doc).
func (m *Member) Owns(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.working[key] {
		return false
	}
	if !m.active(time.Now()) {
		// Refused for staleness alone: however short that lasts, the next
		// notify calls OnChange, so that the caller asks again.
		m.refused = true
		return false
	}
	return true
}

// OwnerOf returns the member key is assigned to by this member's last
// round (for display; only Owns fences).
func (m *Member) OwnerOf(key string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.assigned[key]
}

// Members returns the live members as this member sees them.
func (m *Member) Members() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.members)
}

// active: fresh and past the joining wait. m.mu is held.
func (m *Member) active(now time.Time) bool {
	return !m.fresh.IsZero() && now.Sub(m.fresh) < m.opts.LeaseDuration/2 &&
		now.Sub(m.joined) >= m.opts.LeaseDuration
}

// Run renews the Lease and follows the members until ctx ends, then
// releases the Lease (holder emptied) so that the others take over at
// once. Call it after the work it fences stopped, or cancel it last.
func (m *Member) Run(ctx context.Context) error {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	check := time.NewTicker(m.interval / 4)
	defer check.Stop()
	m.round(ctx)
	for {
		select {
		case <-ctx.Done():
			m.release()
			m.notify()
			return nil
		case <-t.C:
			m.round(ctx)
			m.notify()
		case <-check.C:
			m.notify() // the own Lease may have gone stale between rounds
		}
	}
}

// round renews the own Lease, then lists the group's; only when both
// succeed does the member count as fresh from the round's start. A round
// that assigned this member keys it did not claim yet claims them at
// once with a second renewal and listing, instead of a round later.
func (m *Member) round(ctx context.Context) {
	for range 2 {
		if !m.step(ctx) {
			return
		}
	}
}

// step is one renewal and listing; it reports whether the member gained
// keys it has yet to claim.
func (m *Member) step(ctx context.Context) bool {
	var keys []string
	if m.opts.Keys != nil {
		keys = m.opts.Keys() // before m.mu: it may call into the daemon
	}
	start := time.Now()
	m.mu.Lock()
	if m.fresh.IsZero() || start.Sub(m.fresh) >= m.opts.LeaseDuration {
		// New, or back from a gap in which the others may have expired
		// this member and taken its keys: come back claiming nothing.
		// After a shorter gap nobody did (its Lease is live in every view
		// for a lease duration after its last renewal), so it keeps its
		// claims, and the keys it held wait for it.
		m.reset()
	}
	m.mu.Unlock()
	// A slow API server may take longer than a round: a step that ends
	// within a quarter lease still leaves the next one time to renew
	// before the member goes stale (at half a lease from this start).
	rctx, cancel := context.WithTimeout(ctx, m.opts.LeaseDuration/4)
	defer cancel()
	if err := m.renew(rctx, start); err != nil {
		m.renewFailed(err)
		return false
	}
	list, err := m.opts.Leases.Leases(m.opts.Namespace).List(rctx, metav1.ListOptions{LabelSelector: GroupLabel + "=" + m.opts.Group})
	if err != nil {
		m.opts.Log.Warn("cannot list the members' Leases", "error", err)
		return false
	}
	return m.observe(list.Items, keys, start, time.Now())
}

// renew creates or updates the own Lease.
func (m *Member) renew(ctx context.Context, now time.Time) error {
	leases := m.opts.Leases.Leases(m.opts.Namespace)
	m.mu.Lock()
	cur, c := m.lease, m.claimsNow(now)
	m.mu.Unlock()
	if cur == nil {
		got, err := leases.Get(ctx, m.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			created, err := leases.Create(ctx, m.desired(nil, c, now), metav1.CreateOptions{})
			return m.keep(created, c, err)
		case err != nil:
			return err
		}
		cur = got
	}
	updated, err := leases.Update(ctx, m.desired(cur, c, now), metav1.UpdateOptions{})
	return m.keep(updated, c, err)
}

// keep remembers the Lease and the keys it claims as written; after an
// error the next round reads it again.
func (m *Member) keep(l *coordinationv1.Lease, c claims, err error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.lease = nil
		return err
	}
	m.lease, m.written = l, set(c.Owns)
	return nil
}

func (m *Member) desired(cur *coordinationv1.Lease, c claims, now time.Time) *coordinationv1.Lease {
	l := &coordinationv1.Lease{}
	if cur != nil {
		l = cur.DeepCopy()
	}
	l.Name, l.Namespace = m.name, m.opts.Namespace
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[GroupLabel] = m.opts.Group
	writeClaims(l, c)
	id := m.opts.Identity
	secs := int32(m.opts.LeaseDuration.Round(time.Second) / time.Second)
	t := metav1.NewMicroTime(now)
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != id {
		l.Spec.AcquireTime = &t
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &id, &secs, &t
	return l
}

// release empties the own Lease's holder: the others drop this member at
// their next round instead of a lease duration later.
func (m *Member) release() {
	m.mu.Lock()
	cur := m.lease
	m.fresh, m.lease = time.Time{}, nil
	m.reset()
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*m.interval)
	defer cancel()
	if cur == nil { // the last round was cut short (cancelled mid-way)
		got, err := m.opts.Leases.Leases(m.opts.Namespace).Get(ctx, m.name, metav1.GetOptions{})
		if err != nil || holder(*got) != m.opts.Identity {
			return
		}
		cur = got
	}
	l := cur.DeepCopy()
	l.Spec.HolderIdentity = nil
	if _, err := m.opts.Leases.Leases(m.opts.Namespace).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		m.opts.Log.Warn("membership Lease not released; the others wait for it to expire", "lease", m.name, "error", err)
	}
}

// OwnsFleet reports whether this member writes the fleet-wide status: it
// owns FleetKey.
func (m *Member) OwnsFleet() bool { return m.Owns(FleetKey) }

// renewFailed logs a failed renewal. A conflict means another process
// wrote this member's Lease: two replicas with one identity would own the
// same clusters, so the member goes stale at once and waits a full lease
// duration of clean renewals before it works again (two such processes
// keep conflicting, and neither works).
func (m *Member) renewFailed(err error) {
	if !apierrors.IsConflict(err) {
		m.opts.Log.Warn("membership Lease not renewed", "lease", m.name, "error", err)
		return
	}
	m.opts.Log.Error("another process renews this replica's Lease: is --replica-identity unique? not working until it stops",
		"lease", m.name, "identity", m.opts.Identity)
	m.mu.Lock()
	m.fresh = time.Time{}
	m.reset()
	m.mu.Unlock()
}
