package shard

import (
	"cmp"
	"slices"
)

// Assign returns the owner of every key among members, balanced: every
// member owns floor(n/N) or ceil(n/N) of the n keys. held, which may be
// nil, maps keys to the member that holds them now (the claims the
// members advertise); a key stays with its live holder while that holder
// is within its quota, so a change of the members or keys moves only what
// balance requires:
//
//   - a member that joins takes its quota (at most ceil(n/(N+1)) keys),
//     and only from members above their new quota;
//   - a member that leaves gives its keys to the members with room, and
//     nothing else moves.
//
// A member above its quota keeps the keys of highest rendezvous weight.
// Keys without a holder go, in name order, to the member of highest
// weight with room (rendezvous hashing with bounded loads). From no
// holders at all the result depends only on the names.
func Assign(keys, members []string, held map[string]string) map[string]string {
	out := make(map[string]string, len(keys))
	if len(members) == 0 {
		return out
	}
	keys = slices.Sorted(slices.Values(keys))
	q := newQuota(len(keys), members)
	live := map[string]bool{}
	for _, m := range members {
		live[m] = true
	}
	byHolder := map[string][]string{}
	for _, k := range keys {
		if h := held[k]; live[h] {
			byHolder[h] = append(byHolder[h], k)
		}
	}
	for _, m := range q.order(byHolder) {
		ks := byWeight(m, byHolder[m])
		for _, k := range ks[:q.grant(m, len(ks))] {
			out[k] = m
		}
	}
	for _, k := range keys {
		if out[k] == "" {
			out[k] = q.place(k, members)
		}
	}
	return out
}

// quota tracks the members' loads against floor(n/N), with extra seats
// for the n mod N members that may own one key more.
type quota struct {
	floor int
	extra int
	load  map[string]int
}

func newQuota(n int, members []string) *quota {
	return &quota{floor: n / len(members), extra: n % len(members), load: map[string]int{}}
}

// order is the order in which holders keep their keys: those holding the
// most first (they get the extra seats), by name on ties.
func (q *quota) order(byHolder map[string][]string) []string {
	hs := make([]string, 0, len(byHolder))
	for h := range byHolder {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(byHolder[b]), len(byHolder[a])), cmp.Compare(a, b))
	})
	return hs
}

// grant lets m keep up to want keys and returns how many it keeps.
func (q *quota) grant(m string, want int) int {
	n := min(want, q.floor)
	if want > q.floor && q.extra > 0 {
		n++
		q.extra--
	}
	q.load[m] = n
	return n
}

// room reports whether m may take one more key.
func (q *quota) room(m string) bool {
	return q.load[m] < q.floor || (q.load[m] == q.floor && q.extra > 0)
}

// place gives k to the member of highest weight with room.
func (q *quota) place(k string, members []string) string {
	best, bestW := "", uint64(0)
	for _, m := range members {
		if !q.room(m) {
			continue
		}
		if w := weight(m, k); best == "" || w > bestW || (w == bestW && m < best) {
			best, bestW = m, w
		}
	}
	if q.load[best] == q.floor {
		q.extra--
	}
	q.load[best]++
	return best
}

// byWeight sorts m's keys by weight, highest first.
func byWeight(m string, keys []string) []string {
	return slices.SortedFunc(slices.Values(keys), func(a, b string) int {
		return cmp.Or(cmp.Compare(weight(m, b), weight(m, a)), cmp.Compare(a, b))
	})
}
