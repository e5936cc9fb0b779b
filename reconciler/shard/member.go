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
	// Keys, when set, lists the keys (clusters) to count in
	// Metrics.Owned.
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
	sig     string                // of the last OnChange
}

// observed is what this member saw of another member's Lease.
type observed struct {
	version string    // resourceVersion last seen
	at      time.Time // local time it was first seen at that version
	dead    bool      // expired at that version
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
	}, nil
}

// Identity is this member's name.
func (m *Member) Identity() string { return m.opts.Identity }

// LeaseDuration is the lease duration in effect.
func (m *Member) LeaseDuration() time.Duration { return m.opts.LeaseDuration }

// Owns reports whether this member may work on key now: its own Lease is
// fresh (renewed less than half a lease duration ago), it has been a
// member for at least one lease duration (so the previous owner saw it and
// stopped), and key hashes to it among the live members.
func (m *Member) Owns(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active(time.Now()) && Owner(key, m.members) == m.opts.Identity
}

// OwnerOf returns the member key hashes to among the live members as this
// member sees them (for display; only Owns fences).
func (m *Member) OwnerOf(key string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Owner(key, m.members)
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
// succeed does the member count as fresh from the round's start.
func (m *Member) round(ctx context.Context) {
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, m.interval)
	defer cancel()
	if err := m.renew(rctx, start); err != nil {
		m.renewFailed(err)
		return
	}
	list, err := m.opts.Leases.Leases(m.opts.Namespace).List(rctx, metav1.ListOptions{LabelSelector: GroupLabel + "=" + m.opts.Group})
	if err != nil {
		m.opts.Log.Warn("cannot list the members' Leases", "error", err)
		return
	}
	m.observe(list.Items, start, time.Now())
}

// renew creates or updates the own Lease.
func (m *Member) renew(ctx context.Context, now time.Time) error {
	leases := m.opts.Leases.Leases(m.opts.Namespace)
	m.mu.Lock()
	cur := m.lease
	m.mu.Unlock()
	if cur == nil {
		got, err := leases.Get(ctx, m.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			created, err := leases.Create(ctx, m.desired(nil, now), metav1.CreateOptions{})
			return m.keep(created, err)
		case err != nil:
			return err
		}
		cur = got
	}
	updated, err := leases.Update(ctx, m.desired(cur, now), metav1.UpdateOptions{})
	return m.keep(updated, err)
}

// keep remembers the Lease as written; after an error the next round
// reads it again.
func (m *Member) keep(l *coordinationv1.Lease, err error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.lease = nil
		return err
	}
	m.lease = l
	return nil
}

func (m *Member) desired(cur *coordinationv1.Lease, now time.Time) *coordinationv1.Lease {
	l := &coordinationv1.Lease{}
	if cur != nil {
		l = cur.DeepCopy()
	}
	l.Name, l.Namespace = m.name, m.opts.Namespace
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[GroupLabel] = m.opts.Group
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
	m.mu.Unlock()
}
