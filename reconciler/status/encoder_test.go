package status

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

// richSample is sample() with the record fields a plain sample leaves
// out: a rollout with a time, event instances with resources of any
// shape, artifacts and a handover.
func richSample() Snapshot {
	s := sample()
	since := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	p := &s.Clusters[1].Profiles[0]
	p.Rollout = &PairRollout{Revision: "abc", Stage: "canary", State: "Done", Since: &since}
	p.Artifacts = []Artifact{{Addon: "a", URL: "oci://r/a", Digest: "sha256:0123"}}
	p.EventInstances = []EventInstance{{Name: "i", SourceCluster: "mgmt", Resource: "Service/ns/x", Objects: []string{"ConfigMap/ns/x"},
		Event: &EventRecord{Format: EventRecordFormat, RenderHash: "h",
			Resource: map[string]any{"metadata": map[string]any{"name": "x", "labels": map[string]any{"a": "b"}}, "spec": map[string]any{"ports": []any{80, 443}}}}}}
	s.Clusters[1].Handover = &Handover{Turn: 2, Revision: "abc"}
	return s
}

// TestRecordEncoderMatchesFiles: through a sequence of commits, each
// changing the snapshot in place as a careless caller might (the records
// share maps, slices and pointers with the previous commit's), FilesWith
// writes exactly what Files writes, and marshals only the records that
// changed: an unchanged record is served from memory, a change deep
// inside a record is never served stale.
func TestRecordEncoderMatchesFiles(t *testing.T) {
	prof := func(s *Snapshot) *Profile { return &s.Clusters[1].Profiles[0] }
	var removed ClusterStatus
	steps := []struct {
		name    string
		change  func(s *Snapshot)
		encodes int64 // records marshaled by this step
	}{
		{"first commit", func(*Snapshot) {}, 2},
		{"unchanged", func(*Snapshot) {}, 0},
		{"unchanged, fresh values", func(s *Snapshot) { *s = richSample() }, 0},
		{"profile message", func(s *Snapshot) { s.Clusters[1].Profiles[2].Message = "waiting for apps (Applied)" }, 1},
		{"label map entry", func(s *Snapshot) { s.Clusters[1].Labels["env"] = "dev" }, 1},
		{"nested map entry", func(s *Snapshot) { s.Clusters[1].ClassifierLabels["kubernetes-v1-37"]["kubernetes"] = "v1-38" }, 1},
		{"slice element", func(s *Snapshot) { s.Clusters[1].LabelNotes[0].Reason = "unknown" }, 1},
		{"pointed-to error", func(s *Snapshot) { s.Clusters[0].Profiles[0].Error.Message = "timeout" }, 1},
		{"time", func(s *Snapshot) { *prof(s).Rollout.Since = prof(s).Rollout.Since.Add(time.Second) }, 1},
		{"event resource", func(s *Snapshot) {
			prof(s).EventInstances[0].Event.Resource["spec"].(map[string]any)["ports"].([]any)[1] = 8443
		}, 1},
		{"cluster removed", func(s *Snapshot) { removed, s.Clusters = s.Clusters[0], s.Clusters[1:] }, 0},
		{"cluster added again, as it was", func(s *Snapshot) { s.Clusters = append(s.Clusters, removed) }, 1},
		{"nothing after re-adding", func(*Snapshot) {}, 0},
	}
	var enc RecordEncoder
	s := richSample()
	for _, st := range steps {
		st.change(&s)
		before := enc.encodes.Load()
		got, err := FilesWith(&enc, s)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if n := enc.encodes.Load() - before; n != st.encodes {
			t.Errorf("%s: %d records marshaled, want %d", st.name, n, st.encodes)
		}
		assertSameFiles(t, st.name, got, s)
		if len(enc.last) != len(s.Clusters) {
			t.Errorf("%s: the encoder remembers %d records for %d clusters", st.name, len(enc.last), len(s.Clusters))
		}
	}
}

// assertSameFiles fails unless got is byte-equal to Files(s), freshly
// marshaled.
func assertSameFiles(t *testing.T, step string, got map[string][]byte, s Snapshot) {
	t.Helper()
	want, err := Files(s)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d files, want %d", step, len(got), len(want))
	}
	for name, w := range want {
		if !bytes.Equal(got[name], w) {
			t.Errorf("%s: %s differs from a fresh marshal:\n%s\nwant:\n%s", step, name, got[name], w)
		}
	}
}

// TestRecordEncoderConcurrent: commits of different snapshots through one
// encoder at once each get their own snapshot's files (run with -race).
func TestRecordEncoderConcurrent(t *testing.T) {
	var snaps []Snapshot
	var wants []map[string][]byte
	for i := range 4 {
		s := richSample()
		s.Clusters[i%2].SourceRevision = fmt.Sprintf("rev-%d", i)
		w, err := Files(s)
		if err != nil {
			t.Fatal(err)
		}
		snaps, wants = append(snaps, s), append(wants, w)
	}
	var enc RecordEncoder
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				k := (g + i) % len(snaps)
				got, err := FilesWith(&enc, snaps[k])
				if err != nil || !reflect.DeepEqual(got, wants[k]) {
					t.Errorf("goroutine %d, commit %d: files differ from snapshot %d's (%v)", g, i, k, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestDeepCopy: a copy equals its original and stays equal to what the
// original was, whatever is changed inside the original afterwards.
func TestDeepCopy(t *testing.T) {
	orig := richSample().Clusters[1]
	orig.Labels = map[string]string{} // empty, not nil: DeepEqual tells them apart
	cp, again := deepCopy(orig), deepCopy(orig)
	if !reflect.DeepEqual(cp, orig) {
		t.Fatal("the copy differs from its original")
	}
	orig.ClassifierLabels["kubernetes-v1-37"]["kubernetes"] = "x"
	orig.LabelNotes[0].Key = "x"
	orig.Handover.Turn = 9
	p := &orig.Profiles[0]
	*p.Rollout.Since = time.Time{}
	p.EventInstances[0].Objects[0] = "x"
	p.EventInstances[0].Event.Resource["metadata"].(map[string]any)["labels"].(map[string]any)["a"] = "x"
	p.EventInstances[0].Event.Resource["spec"].(map[string]any)["ports"].([]any)[0] = 1
	orig.Profiles[1].Error.Message = "x"
	if !reflect.DeepEqual(cp, again) {
		t.Error("a change inside the original shows in its copy")
	}
	if cp.Labels == nil || cp.ClassifierErrors == nil || cp.Profiles[0].Changes != nil {
		t.Error("the copy mixes up nil and empty")
	}
}

// fleetSnapshots returns a fleet of n clusters with two profiles each, as
// one commit sees it, and the next commit's, where changed of the records
// differ in a profile's message.
func fleetSnapshots(n, changed int) (Snapshot, Snapshot) {
	rev := "abc123def4560000000000000000000000000000"
	a := Snapshot{Fleet: Fleet{SourceRevision: rev, AppliedRevision: rev}}
	for i := range n {
		a.Clusters = append(a.Clusters, ClusterStatus{Cluster: fmt.Sprintf("c%04d", i), SourceRevision: rev, Reachable: true,
			KubernetesVersion: "v1.37.2", Generation: 3,
			Labels: map[string]string{"env": "prod", "region": "eu", "kubernetes": "v1-37", "tier": fmt.Sprint(i % 3)},
			Profiles: []Profile{
				{Name: "infra", State: StateApplied, Revision: rev, RenderHash: "sha256:" + rev + rev[:24], Objects: 30, Health: "Healthy"},
				{Name: "apps", State: StateApplied, Revision: rev, RenderHash: "sha256:" + rev[:24] + rev, Objects: 30, Health: "Healthy"},
			}})
	}
	b := a
	b.Clusters = append([]ClusterStatus(nil), a.Clusters...)
	for i := 0; i < changed; i++ {
		c := &b.Clusters[i*n/changed]
		c.Profiles = append([]Profile(nil), c.Profiles...)
		c.Profiles[1].Message = "progressing: 2 of 30 objects not ready"
	}
	return a, b
}

// BenchmarkFilesUnchanged is one status commit of 2,000 clusters, 1% of
// whose records changed since the commit before (each iteration switches
// between the two snapshots): with the encoder's memory, and without.
func BenchmarkFilesUnchanged(b *testing.B) {
	a, next := fleetSnapshots(2000, 20)
	snaps := [2]Snapshot{a, next}
	b.Run("memo", func(b *testing.B) {
		var enc RecordEncoder
		if _, err := FilesWith(&enc, a); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := FilesWith(&enc, snaps[(i+1)%2]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("nomemo", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := Files(snaps[(i+1)%2]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
