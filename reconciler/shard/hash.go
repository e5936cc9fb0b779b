package shard

import (
	"hash/fnv"
)

// Owner returns the member of highest rendezvous weight hash(member,
// key): the owner of FleetKey, and the first choice of a key Assign
// places. Empty when there are no members.
func Owner(key string, members []string) string {
	best, bestW := "", uint64(0)
	for _, m := range members {
		w := weight(m, key)
		if best == "" || w > bestW || (w == bestW && m < best) {
			best, bestW = m, w
		}
	}
	return best
}

// weight is the FNV-1a hash of member and key, separated by a byte no
// name holds, then mixed (splitmix64's finalizer) so that weights of
// similar names do not correlate.
func weight(member, key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(member))
	h.Write([]byte{0})
	h.Write([]byte(key))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// FleetKey is the key whose owner writes the fleet-wide part of status
// (the revision in force, validation errors, the dashboard): one writer,
// chosen like a cluster's owner.
const FleetKey = "\x00fleet"
