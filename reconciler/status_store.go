package reconciler

import (
	"reflect"
	"sort"
	"sync"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// statusStore holds the latest record of every cluster and of the fleet,
// as reconciliations finish. Records it was seeded with (from the status
// branch, at start) stay until they are recomputed or their cluster leaves
// the repository, so a restart never wipes what it could not recompute.
type statusStore struct {
	mu       sync.Mutex
	fleet    status.Fleet
	clusters map[string]status.ClusterStatus
	rollouts map[string]status.RolloutStatus // by profile
	version  uint64                          // bumped on every change
	// computed names the clusters whose record this daemon computed
	// itself (not seeded from the status branch) since it last lost them:
	// only those may a replica of a sharded fleet write.
	computed map[string]bool
}

func newStatusStore() *statusStore {
	return &statusStore{clusters: map[string]status.ClusterStatus{}, rollouts: map[string]status.RolloutStatus{},
		computed: map[string]bool{}}
}

// seed loads the records of an earlier daemon.
func (s *statusStore) seed(snap status.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fleet = snap.Fleet
	for _, c := range snap.Clusters {
		s.clusters[c.Cluster] = c
	}
}

func (s *statusStore) setFleet(f status.Fleet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !reflect.DeepEqual(s.fleet, f) {
		s.fleet = f
		s.version++
	}
}

func (s *statusStore) setCluster(c status.ClusterStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.computed[c.Cluster] = true
	if old, ok := s.clusters[c.Cluster]; !ok || !reflect.DeepEqual(old, c) {
		s.clusters[c.Cluster] = c
		s.version++
	}
}

// keepOnly drops the records of clusters not in names.
func (s *statusStore) keepOnly(names map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version += dropAbsent(s.clusters, names)
}

// snapshot returns the records, clusters by name, and the version they
// are at.
func (s *statusStore) snapshot() (status.Snapshot, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := status.Snapshot{Fleet: s.fleet, Clusters: make([]status.ClusterStatus, 0, len(s.clusters))}
	out.Fleet.Rollouts = s.rolloutList()
	for _, c := range s.clusters {
		out.Clusters = append(out.Clusters, c)
	}
	sort.Slice(out.Clusters, func(i, j int) bool { return out.Clusters[i].Cluster < out.Clusters[j].Cluster })
	return out, s.version
}

func (s *statusStore) cluster(name string) (status.ClusterStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clusters[name]
	return c, ok
}

// lost forgets that this daemon computed a cluster's record: another
// replica owns it now, and the record is no longer this daemon's to write
// until it reconciles the cluster again.
func (s *statusStore) lost(cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.computed, cluster)
}

// isComputed reports whether this daemon computed the cluster's record
// since it last lost the cluster.
func (s *statusStore) isComputed(cluster string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.computed[cluster]
}

// touch bumps the version, so that the next status commit is made (and
// finds nothing to commit when the files did not change).
func (s *statusStore) touch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
}

// dropAbsent deletes the entries of m whose key keep does not hold and
// returns how many it deleted.
func dropAbsent[V any](m map[string]V, keep map[string]bool) uint64 {
	var n uint64
	for k := range m {
		if !keep[k] {
			delete(m, k)
			n++
		}
	}
	return n
}

// setRollout records where a profile's rollout stands.
func (s *statusStore) setRollout(r status.RolloutStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.rollouts[r.Profile]; !ok || !reflect.DeepEqual(old, r) {
		s.rollouts[r.Profile] = r
		s.version++
	}
}

// rolloutList returns the rollouts by profile; s.mu is held.
func (s *statusStore) rolloutList() []status.RolloutStatus {
	if len(s.rollouts) == 0 {
		return nil
	}
	out := make([]status.RolloutStatus, 0, len(s.rollouts))
	for _, r := range s.rollouts {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Profile < out[j].Profile })
	return out
}

func (s *statusStore) keepRollouts(keep map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version += dropAbsent(s.rollouts, keep)
}
