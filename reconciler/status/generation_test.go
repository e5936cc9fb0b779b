package status

import (
	"bytes"
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
// unchanged record is kept, a changed proposal is written with the next
// generation, a parent someone else wrote in between is decided afresh.
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

// memoRecords are records with every kind of top-level field around
// Generation, and a label named like it.
func memoRecords() []ClusterStatus {
	base := func() ClusterStatus {
		return ClusterStatus{APIVersion: APIVersion, Kind: "ClusterStatus", Cluster: "c", SourceRevision: "a", Reachable: true}
	}
	var out []ClusterStatus
	add := func(f func(*ClusterStatus)) {
		r := base()
		f(&r)
		out = append(out, r)
	}
	add(func(*ClusterStatus) {})
	add(func(r *ClusterStatus) { r.Reachable, r.Error = false, "dial tcp: refused\nsecond line" })
	add(func(r *ClusterStatus) { r.Owner, r.Mode = "r-1", "pull" })
	add(func(r *ClusterStatus) { r.Handover = &Handover{Turn: 3, Revision: "b"} })
	add(func(r *ClusterStatus) { r.Paused = true })
	add(func(r *ClusterStatus) { r.Labels = map[string]string{"generation": "5", "env": "prod"} })
	add(func(r *ClusterStatus) {
		r.Profiles = []Profile{{Name: "fa", State: StateApplied, Revision: "a", Objects: 5, Message: "generation: 3"}}
	})
	add(func(r *ClusterStatus) { r.Handover, r.Paused, r.SourceRevision = &Handover{Turn: 1}, true, "b" })
	return out
}

// TestRecordMemoAgreesWithNextRecord: from every record to every other,
// on top of the memo's own writes and of a record another writer left,
// the memo's decision and bytes are NextRecord's.
func TestRecordMemoAgreesWithNextRecord(t *testing.T) {
	recs := memoRecords()
	enc := make([][]byte, len(recs))
	for i, r := range recs {
		b, err := marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		enc[i] = b
	}
	const file = "status/clusters/c.yaml"
	for i := range enc {
		for j := range enc {
			var m RecordMemo
			parent, _ := m.Next(file, nil, false, enc[i])
			for _, p := range [][]byte{parent, bytes.Replace(parent, []byte("generation: 1\n"), []byte("generation: 6\n"), 1)} {
				wantOut, wantWrite := NextRecord(p, true, enc[j])
				out, write := m.Next(file, p, true, enc[j])
				if write != wantWrite || !bytes.Equal(out, wantOut) {
					t.Errorf("%d → %d on\n%s\nmemo: %v\n%s\nNextRecord: %v\n%s", i, j, p, write, out, wantWrite, wantOut)
				}
			}
		}
	}
}

// TestRecordMemoDecidesWithoutParsing: keeping a record, and writing over
// the memo's own last write, take a few allocations where NextRecord's
// parsing and printing take about a thousand.
func TestRecordMemoDecidesWithoutParsing(t *testing.T) {
	recs := memoRecords()
	a, errA := marshal(recs[6])
	b, errB := marshal(recs[7])
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	const file = "status/clusters/c.yaml"
	var m RecordMemo
	parent, _ := m.Next(file, nil, false, a)
	if n := testing.AllocsPerRun(100, func() {
		if _, write := m.Next(file, parent, true, a); write {
			t.Fatal("an unchanged record is written")
		}
	}); n > 5 {
		t.Errorf("keeping a record took %.0f allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, write := m.Next(file, parent, true, b); !write {
			t.Fatal("a changed record is kept")
		}
		m.written(file, parent, true) // the parent stays the memo's last write
	}); n > 10 {
		t.Errorf("writing a record over the memo's own took %.0f allocations", n)
	}
}

func TestGenerationLine(t *testing.T) {
	for _, tc := range []struct {
		rec  string
		gen  int64
		rest string
		ok   bool
	}{
		{"cluster: c\ngeneration: 4\nreachable: true\n", 4, "cluster: c\nreachable: true\n", true},
		{"cluster: c\nreachable: true\n", 0, "", false},
		{"generation: 4\ngeneration: 5\n", 0, "", false},
		{"cluster: c\ngeneration: 0\n", 0, "", false},
		{"cluster: c\ngeneration: 04\n", 0, "", false},
		{"cluster: c\ngeneration: 4", 0, "", false},
		{"labels:\n  generation: \"4\"\n", 0, "", false},
	} {
		rec := []byte(tc.rec)
		gen, start, end, ok := generationLine(rec)
		var rest string
		if ok {
			rest = string(rec[:start]) + string(rec[end:])
			if !equalWithout(rec, start, end, []byte(tc.rest)) || equalWithout(rec, start, end, []byte(tc.rest+"x")) {
				t.Errorf("%q: equalWithout disagrees with %q", tc.rec, tc.rest)
			}
		}
		if gen != tc.gen || rest != tc.rest || ok != tc.ok {
			t.Errorf("%q: %d %q %v, want %d %q %v", tc.rec, gen, rest, ok, tc.gen, tc.rest, tc.ok)
		}
	}
}

// BenchmarkRecordMemo is a status commit's decision on one small record:
// kept, and written over the memo's own last write.
func BenchmarkRecordMemo(b *testing.B) {
	recs := memoRecords()
	x, _ := marshal(recs[6])
	y, _ := marshal(recs[7])
	const file = "status/clusters/c.yaml"
	b.Run("keep", func(b *testing.B) {
		var m RecordMemo
		parent, _ := m.Next(file, nil, false, x)
		b.ReportAllocs()
		for b.Loop() {
			m.Next(file, parent, true, x)
		}
	})
	b.Run("write", func(b *testing.B) {
		var m RecordMemo
		parent, _ := m.Next(file, nil, false, x)
		b.ReportAllocs()
		for b.Loop() {
			m.Next(file, parent, true, y)
			m.written(file, parent, true)
		}
	})
	b.Run("NextRecord", func(b *testing.B) {
		parent, _ := NextRecord(nil, false, x)
		b.ReportAllocs()
		for b.Loop() {
			NextRecord(parent, true, y)
		}
	})
}
