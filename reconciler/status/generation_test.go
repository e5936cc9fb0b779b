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

// TestRecordMemo: the memo decides as NextRecord does, at every call: an
// unchanged record is kept again from memory, a changed proposal or a
// parent someone else wrote in between is decided afresh.
func TestRecordMemo(t *testing.T) {
	rec := func(rev string, gen int64) []byte {
		b, err := marshal(ClusterStatus{Cluster: "c", SourceRevision: rev, Owner: "r-0", Generation: gen})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var m RecordMemo
	const file = "status/clusters/c.yaml"
	for i := range 2 {
		if out, write := m.Next(file, rec("a", 4), true, rec("a", 0)); write || out != nil {
			t.Errorf("call %d: an unchanged record is written", i)
		}
	}
	if len(m.kept) != 1 {
		t.Fatalf("kept %d decisions, want 1", len(m.kept))
	}
	out, write := m.Next(file, rec("a", 4), true, rec("b", 0))
	if !write || !strings.Contains(string(out), "generation: 5") || !strings.Contains(string(out), "sourceRevision: b") {
		t.Errorf("a changed proposal: %v\n%s", write, out)
	}
	out, write = m.Next(file, rec("z", 7), true, rec("a", 0))
	if !write || !strings.Contains(string(out), "generation: 8") {
		t.Errorf("a parent written in between: %v\n%s", write, out)
	}
	if out, write = m.Next(file, nil, false, rec("a", 0)); !write || !strings.Contains(string(out), "generation: 1\n") {
		t.Errorf("no parent: %v\n%s", write, out)
	}
}
