package shard

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// ClaimsAnnotation, on a membership Lease, lists the keys its member
// claims: those it owns or may work on ("owns") and those it lost less
// than drainFor ago ("draining"). Another member works on a key only when
// no live member's Lease claims it.
const ClaimsAnnotation = "regatta.dev/shard-claims"

// drainFor is how long a member keeps claiming a key it lost: longer than
// the daemon's fence needs to cancel the cluster's requests (fencePoll,
// 100 ms) and for requests already sent to finish.
const drainFor = time.Second

// claims is the content of ClaimsAnnotation.
type claims struct {
	Owns     []string `json:"owns,omitempty"`
	Draining []string `json:"draining,omitempty"`
}

// readClaims decodes a Lease's claims; a Lease without them (or with a
// value this version cannot read) claims nothing it can tell, so it is
// taken to claim every key: nobody else works until it says otherwise.
func readClaims(l coordinationv1.Lease) (claims, bool) {
	v, ok := l.Annotations[ClaimsAnnotation]
	if !ok {
		return claims{}, false
	}
	var c claims
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		return claims{}, false
	}
	return c, true
}

// writeClaims sets the claims annotation of l.
func writeClaims(l *coordinationv1.Lease, c claims) {
	b, _ := json.Marshal(c) // a struct of string slices always encodes
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[ClaimsAnnotation] = string(b)
}

// claimsNow is what the next renewal advertises: the keys this member
// owns by the last assignment and those still draining (forgetting the
// drained ones). m.mu is held.
func (m *Member) claimsNow(now time.Time) claims {
	for k, at := range m.draining {
		if now.Sub(at) >= drainFor {
			delete(m.draining, k)
		}
	}
	return claims{
		Owns:     slices.Sorted(maps.Keys(m.target)),
		Draining: slices.Sorted(maps.Keys(m.draining)),
	}
}

// retarget replaces the keys this member owns by the assignment; the
// ones it loses drain. m.mu is held.
func (m *Member) retarget(target map[string]bool, now time.Time) {
	for k := range m.target {
		if !target[k] {
			m.draining[k] = now
		}
	}
	for k := range target {
		delete(m.draining, k)
	}
	m.target = target
}

// reset gives up every key (they drain): a member that went stale, or
// whose Lease another process wrote, comes back owning nothing, since the
// others may have expired it and taken its keys. m.mu is held.
func (m *Member) reset() {
	m.retarget(nil, time.Now())
	m.written, m.working = nil, nil
}

func set(keys []string) map[string]bool {
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out
}
