package shard

import (
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// observe takes a listing of the group's Leases made in the round that
// started at start and answered at now. Another member is live until one
// lease duration after the local time its Lease was first seen at its
// current version: its clocks are never read. A Lease whose holder was
// emptied (released) drops its member at once; one that vanished is kept
// until it expires, since its member may still be working.
func (m *Member) observe(items []coordinationv1.Lease, start, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	listed := map[string]bool{}
	for _, l := range items {
		id := holder(l)
		if l.Name == m.name || id == "" {
			if id == "" && l.Name != m.name {
				delete(m.seen, strings.TrimPrefix(l.Name, m.opts.Group+"-"))
			}
			continue
		}
		listed[id] = true
		if o, ok := m.seen[id]; !ok || o.version != l.ResourceVersion {
			m.seen[id] = observed{version: l.ResourceVersion, at: now}
		}
	}
	live := []string{m.opts.Identity}
	for id, o := range m.seen {
		age := now.Sub(o.at)
		switch {
		case o.dead && !listed[id]:
			delete(m.seen, id) // expired, then deleted
		case o.dead:
		case age < m.opts.LeaseDuration:
			live = append(live, id)
		default:
			m.expired(id, age)
		}
	}
	slices.Sort(live)
	if m.joined.IsZero() || m.fresh.IsZero() || start.Sub(m.fresh) >= m.opts.LeaseDuration/2 {
		// First round, or back from a gap in which the others may have
		// taken this member's share: wait a lease duration again, until
		// they saw it back and stopped.
		m.joined = start
	}
	m.fresh = start
	if !slices.Equal(live, m.members) {
		if m.members != nil && m.opts.Metrics != nil {
			m.opts.Metrics.Rebalances.Inc()
		}
		m.opts.Log.Info("members changed", "members", live)
		m.members = live
	}
}

// expired marks a member not seen renewed for a lease duration as gone,
// until its Lease changes again. m.mu is held.
func (m *Member) expired(id string, age time.Duration) {
	o := m.seen[id]
	o.dead = true
	m.seen[id] = o
	m.opts.Log.Info("member expired; taking over its share", "member", id, "lastRenewalSeen", age.Round(time.Millisecond))
	if m.opts.Metrics != nil {
		m.opts.Metrics.Takeover.Observe(age.Seconds())
	}
}

func holder(l coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// notify calls OnChange when the live members or this member's standing
// changed since the last call, and updates the metrics.
func (m *Member) notify() {
	m.mu.Lock()
	active := m.active(time.Now())
	sig := strings.Join(m.members, ",")
	if !active {
		sig = "inactive"
	}
	changed := sig != m.sig
	m.sig = sig
	members := len(m.members)
	m.mu.Unlock()
	if m.opts.Metrics != nil {
		m.opts.Metrics.Members.Set(float64(members))
		m.opts.Metrics.Active.Set(b2f(active))
		if m.opts.Keys != nil { // the clusters change with revisions too
			m.opts.Metrics.Owned.Set(float64(m.count(m.opts.Keys())))
		}
	}
	if changed && m.opts.OnChange != nil {
		m.opts.OnChange()
	}
}

func (m *Member) count(keys []string) int {
	n := 0
	for _, k := range keys {
		if m.Owns(k) {
			n++
		}
	}
	return n
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
