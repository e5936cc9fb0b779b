package shard

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// observe takes a listing of the group's Leases made in the round that
// started at start and answered at now, with the keys to share. Another
// member is live until one lease duration after the local time its Lease
// was first seen at its current version: its clocks are never read. A
// Lease whose holder was emptied (released) drops its member at once; one
// that vanished is kept until it expires, since its member may still be
// working. It reports whether this member was assigned keys its Lease
// does not claim yet.
func (m *Member) observe(items []coordinationv1.Lease, keys []string, start, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.see(items, now)
	live := m.live(now)
	if m.joined.IsZero() || m.fresh.IsZero() || start.Sub(m.fresh) >= m.opts.LeaseDuration {
		// First round, after a conflict on the own Lease, or back from a
		// gap in which another process may have started with this
		// identity: wait a lease duration of clean renewals, in which a
		// twin shows by conflicting. After a shorter gap the member kept
		// its claims and nobody expired it: it goes on at once.
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
	return m.assign(keys, now)
}

// see records the listed Leases of the other members. m.mu is held.
func (m *Member) see(items []coordinationv1.Lease, now time.Time) {
	m.listed = map[string]bool{}
	for _, l := range items {
		id := holder(l)
		if l.Name == m.name {
			continue
		}
		if id == "" {
			delete(m.seen, strings.TrimPrefix(l.Name, m.opts.Group+"-"))
			continue
		}
		m.listed[id] = true
		if o, ok := m.seen[id]; !ok || o.version != l.ResourceVersion {
			c, ok := readClaims(l)
			m.seen[id] = observed{version: l.ResourceVersion, at: now, claims: c, all: !ok}
		}
	}
}

// live returns the live members, sorted, self included, and expires the
// others. m.mu is held.
func (m *Member) live(now time.Time) []string {
	live := []string{m.opts.Identity}
	for id, o := range m.seen {
		age := now.Sub(o.at)
		switch {
		case o.dead && !m.listed[id]:
			delete(m.seen, id) // expired, then deleted
		case o.dead:
		case age < m.opts.LeaseDuration:
			live = append(live, id)
		default:
			m.expired(id, age)
		}
	}
	slices.Sort(live)
	return live
}

// assign computes the owners of keys among the live members from the
// keys they hold, and what this member may work on: what is assigned to
// it, its Lease claimed before this listing, and no other live member
// claims. m.mu is held.
func (m *Member) assign(keys []string, now time.Time) bool {
	held, blocked, all := m.others()
	for k := range m.written { // as the others see this member's claims
		hold(held, m.opts.Identity, k)
	}
	m.assigned = Assign(keys, m.members, held)
	m.assigned[FleetKey] = Owner(FleetKey, m.members)
	target := map[string]bool{}
	for k, o := range m.assigned {
		if o == m.opts.Identity {
			target[k] = true
		}
	}
	m.retarget(target, now)
	working, gained := map[string]bool{}, false
	for k := range target {
		switch {
		case !m.written[k]:
			gained = true
		case !all && !blocked[k]:
			working[k] = true
		}
	}
	if !maps.Equal(working, m.working) {
		m.gen++
	}
	m.working = working
	return gained
}

// others returns, from the live other members' claims, who holds which
// key (on a tie, the holder of highest weight), the keys claimed, and
// whether one claims everything (a Lease without claims). m.mu is held.
func (m *Member) others() (map[string]string, map[string]bool, bool) {
	held, blocked, all := map[string]string{}, map[string]bool{}, false
	for _, id := range m.members {
		o, ok := m.seen[id]
		if !ok || id == m.opts.Identity {
			continue
		}
		all = all || o.all
		for _, k := range o.claims.Owns {
			blocked[k] = true
			hold(held, id, k)
		}
		for _, k := range o.claims.Draining {
			blocked[k] = true
		}
	}
	return held, blocked, all
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

// hold records that id claims k; of two claimants the one of highest
// weight holds it, as every member decides alike.
func hold(held map[string]string, id, k string) {
	if h, ok := held[k]; !ok || weight(id, k) > weight(h, k) {
		held[k] = id
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
	sig := strings.Join(m.members, ",") + "/" + strconv.FormatUint(m.gen, 10)
	if !active {
		sig = "inactive"
	}
	changed := sig != m.sig || m.refused
	m.sig, m.refused = sig, false
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

// count is how many of keys this member owns (without Owns' note of a
// refusal: the metrics do not act on it).
func (m *Member) count(keys []string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.active(time.Now()) {
		return 0
	}
	n := 0
	for _, k := range keys {
		if m.working[k] {
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
