package status

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
)

// RecordEncoder remembers the YAML of the cluster records it encoded, so
// that a status commit, which writes every cluster's record, marshals only
// the records that changed since the commit before: marshaling all of them
// at every commit of a fleet-wide change grew with the square of the
// fleet. A record is served from memory when it equals (reflect.DeepEqual)
// the one last encoded for its cluster, which makes the same bytes since
// marshal is deterministic. Safe for concurrent use; the zero value is
// ready; a nil *RecordEncoder marshals every record and remembers nothing.
type RecordEncoder struct {
	mu sync.Mutex
	// last are the records of the last Encode, by cluster. A map is never
	// modified once stored here (Encode replaces it), so it is read
	// without mu.
	last map[string]encodedRecord
	// encodes counts the records marshaled (for tests).
	encodes atomic.Int64
}

// encodedRecord is a record and its YAML.
type encodedRecord struct {
	// rec is a deep copy of the record encoded: the caller's may change
	// in place afterwards.
	rec  ClusterStatus
	yaml []byte
}

// Encode returns the YAML of each record, in order, as Files writes it:
// from memory for a record equal to the one last encoded for its cluster,
// else marshaled. Afterwards it remembers these records only, so clusters
// absent from records are forgotten. The bytes returned are shared with
// other calls and must not be modified. Of concurrent calls, the last to
// finish is remembered.
func (e *RecordEncoder) Encode(records []ClusterStatus) ([][]byte, error) {
	last := e.lastRecords()
	next := make(map[string]encodedRecord, len(records))
	out := make([][]byte, len(records))
	for i := range records {
		r, err := e.record(&records[i], last)
		if err != nil {
			return nil, err
		}
		out[i], next[records[i].Cluster] = r.yaml, r
	}
	e.remember(next)
	return out, nil
}

// record is c's encoding: the last one when c did not change, else a
// fresh one.
func (e *RecordEncoder) record(c *ClusterStatus, last map[string]encodedRecord) (encodedRecord, error) {
	if prev, ok := last[c.Cluster]; ok && reflect.DeepEqual(prev.rec, *c) {
		return prev, nil
	}
	b, err := marshal(c)
	if err != nil {
		return encodedRecord{}, fmt.Errorf("encode status of cluster %s: %w", c.Cluster, err)
	}
	if e == nil {
		return encodedRecord{yaml: b}, nil // nothing to remember
	}
	e.encodes.Add(1)
	return encodedRecord{rec: deepCopy(*c), yaml: b}, nil
}

// lastRecords returns the records of the last Encode (nil: none).
func (e *RecordEncoder) lastRecords() map[string]encodedRecord {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last
}

// remember makes next the records of the last Encode.
func (e *RecordEncoder) remember(next map[string]encodedRecord) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.last = next
}
