package status

import (
	"bytes"
	"crypto/sha256"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// NextRecord decides the write of a cluster record on top of the status
// branch's parent commit, whose record of the cluster is parent (found
// false: none): nothing when proposed says what parent says (generation
// aside), else proposed with the generation after parent's. The caller
// writes only the records of clusters it owns and has reconciled itself
// since it owned them; with that, every write is newer than the one it
// replaces, and Generation numbers them.
func NextRecord(parent []byte, found bool, proposed []byte) ([]byte, bool) {
	var next ClusterStatus
	if err := yaml.Unmarshal(proposed, &next); err != nil {
		return proposed, true // not a record: as proposed
	}
	var prev ClusterStatus
	if found && yaml.Unmarshal(parent, &prev) != nil {
		found = false
	}
	gen := prev.Generation
	prev.Generation, next.Generation = 0, 0
	a, errA := marshal(prev)
	b, errB := marshal(next)
	if found && errA == nil && errB == nil && bytes.Equal(a, b) {
		return nil, false
	}
	next.Generation = gen + 1
	out, err := marshal(next)
	if err != nil {
		return proposed, true
	}
	return out, true
}

// RecordMemo remembers the records NextRecord left as they were, so that
// a status commit, which proposes every cluster's record, decides an
// unchanged one without parsing it: NextRecord is a function of its
// arguments, and parsing and printing two records per cluster at every
// commit grew with the fleet. Safe for concurrent use; the zero value is
// ready.
type RecordMemo struct {
	mu sync.Mutex
	// kept are, by file, the parent and proposed records (their SHA-256)
	// of the last decision to keep the parent's record.
	kept map[string][2][sha256.Size]byte
}

// Next is NextRecord for the record at file, from memory when the same
// parent and proposal were decided before.
func (m *RecordMemo) Next(file string, parent []byte, found bool, proposed []byte) ([]byte, bool) {
	if !found {
		return NextRecord(parent, found, proposed)
	}
	key := [2][sha256.Size]byte{sha256.Sum256(parent), sha256.Sum256(proposed)}
	m.mu.Lock()
	hit := m.kept != nil && m.kept[file] == key
	m.mu.Unlock()
	if hit {
		return nil, false
	}
	out, write := NextRecord(parent, found, proposed)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kept == nil {
		m.kept = map[string][2][sha256.Size]byte{}
	}
	if write {
		delete(m.kept, file)
	} else {
		m.kept[file] = key
	}
	return out, write
}
