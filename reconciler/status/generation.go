package status

import (
	"bytes"

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
