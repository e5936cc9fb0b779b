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

// RecordMemo decides as NextRecord does, without parsing a record in the
// two cases a status commit meets nearly always:
//   - the parent is the proposal plus its generation line: kept;
//   - the parent is the record this memo last wrote for the file (so
//     marshal's own output) and the proposal differs from it: written, the
//     proposal with the next generation's line.
//
// NextRecord parses and prints both records (about 150 µs and 150 KiB for
// a small one), and a status commit proposes every cluster's record. A
// decision NextRecord made to keep a parent someone else wrote (another
// replica, an older version) is remembered too, so that it is not made
// again. Safe for concurrent use; the zero value is ready.
//
// The proposals it is given are marshal's output (RecordEncoder), or a
// pulled cluster's record as its agent committed it; a record of another
// version's format may be written once more than NextRecord would.
type RecordMemo struct {
	mu sync.Mutex
	// kept are, by file, the parent and proposed records (their SHA-256)
	// of the last decision to keep a parent this memo did not write.
	kept map[string][2][sha256.Size]byte
	// wrote is, by file, the SHA-256 of the record last written.
	wrote map[string][sha256.Size]byte
}

// Next is NextRecord for the record at file, without parsing when it can
// (see RecordMemo).
func (m *RecordMemo) Next(file string, parent []byte, found bool, proposed []byte) ([]byte, bool) {
	if !found {
		out, write := NextRecord(parent, found, proposed)
		return m.written(file, out, write)
	}
	gen, start, end, ok := generationLine(parent)
	if ok && equalWithout(parent, start, end, proposed) {
		return nil, false
	}
	sum := sha256.Sum256(parent)
	if ok && m.wroteLast(file, sum) {
		if out, ok := withGeneration(proposed, gen+1); ok {
			return m.written(file, out, true)
		}
	}
	key := [2][sha256.Size]byte{sum, sha256.Sum256(proposed)}
	m.mu.Lock()
	hit := m.kept != nil && m.kept[file] == key
	m.mu.Unlock()
	if hit {
		return nil, false
	}
	out, write := NextRecord(parent, found, proposed)
	if write {
		return m.written(file, out, write)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kept == nil {
		m.kept = map[string][2][sha256.Size]byte{}
	}
	m.kept[file] = key
	return out, write
}

// wroteLast reports whether sum is the record last written for file.
func (m *RecordMemo) wroteLast(file string, sum [sha256.Size]byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.wrote[file]
	return ok && w == sum
}

// written remembers out as file's last write and returns its arguments.
func (m *RecordMemo) written(file string, out []byte, write bool) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.kept, file)
	if m.wrote == nil {
		m.wrote = map[string][sha256.Size]byte{}
	}
	m.wrote[file] = sha256.Sum256(out)
	return out, write
}
