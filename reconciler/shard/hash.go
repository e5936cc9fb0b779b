// Package shard splits the fleet's clusters among the replicas of
// `regatta run --replicas-mode shard`. Each replica holds a membership
// Lease (coordination.k8s.io/v1) in the management cluster; the live
// members are those whose Lease was seen renewed within one lease
// duration, and each cluster belongs to one of them by rendezvous
// (highest-random-weight) hashing, so a member that joins or leaves moves
// only its own share. Member.Owns is the fence: true only while the
// member's own Lease is fresh, the cluster hashes to it, and any member
// that may have held the cluster before has had a full lease duration to
// stop.
package shard

import (
	"hash/fnv"
)

// Owner returns the member that owns key by rendezvous hashing: the one
// with the highest weight hash(member, key). Empty when there are no
// members.
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

// Assign returns the owner of every key.
func Assign(keys, members []string) map[string]string {
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[k] = Owner(k, members)
	}
	return out
}

// FleetKey is the key whose owner writes the fleet-wide part of status
// (the revision in force, validation errors, the dashboard): one writer,
// chosen like a cluster's owner.
const FleetKey = "\x00fleet"
