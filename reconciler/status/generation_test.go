package status

import (
	"strings"
	"testing"
)

func TestNextRecord(t *testing.T) {
	rec := func(rev string, gen int64) []byte {
		b, err := marshal(ClusterStatus{Cluster: "c", SourceRevision: rev, Owner: "r-0", Generation: gen})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if _, write := NextRecord(rec("a", 4), true, rec("a", 0)); write {
		t.Error("an unchanged record (generation aside) is written")
	}
	out, write := NextRecord(rec("a", 4), true, rec("b", 1))
	if !write || !strings.Contains(string(out), "generation: 5") || !strings.Contains(string(out), "sourceRevision: b") {
		t.Errorf("changed record: %v\n%s", write, out)
	}
	out, write = NextRecord(nil, false, rec("b", 9))
	if !write || !strings.Contains(string(out), "generation: 1\n") {
		t.Errorf("first record: %v\n%s", write, out)
	}
}
