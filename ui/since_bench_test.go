package ui_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/ui"
	"github.com/regatta-dev/regatta/ui/timeline"
)

// The sizes of BenchmarkFindStarts: a fleet of benchClusters, whose
// first benchFailing clusters' web pairs fail, one more from each status
// commit on (so the walk goes back to the first), while a rollout moves
// another benchClusters/benchCommits records to a new revision in each.
const (
	benchClusters = 2000
	benchFailing  = 50
	benchCommits  = 50
)

// benchFleet is the fleet at commit k.
func benchFleet(k int) status.Snapshot {
	rev := func(i int) string { return fmt.Sprintf("%040x", 0xbe0000+i) }
	s := status.Snapshot{Fleet: status.Fleet{SourceRevision: rev(k), AppliedRevision: rev(k)}}
	for c := range benchClusters {
		r := rev(0)
		if c%benchCommits <= k {
			r = rev(c % benchCommits)
		}
		web := status.StateApplied
		if c < benchFailing && k >= c*benchCommits/benchFailing {
			web = status.StateFailed
		}
		s.Clusters = append(s.Clusters, status.ClusterStatus{Cluster: fmt.Sprintf("c%04d", c), SourceRevision: r, Reachable: true,
			Labels: map[string]string{"env": "prod", "region": fmt.Sprintf("r%d", c%7)},
			Profiles: []status.Profile{
				{Name: "base", State: status.StateApplied, Revision: r, Objects: 12},
				{Name: "web", State: web, Revision: r, Objects: 5, Message: "Deployment/web/web: image pull failed"},
			}})
	}
	return s
}

// BenchmarkFindStarts: since when each of 50 failing pairs of a fleet of
// 2,000 clusters has been failing, over 50 status commits of about 41
// changed records each (the walk goes back to the first). cold: a new Reader each time (its frames decoded
// from Git: the head whole, then one tree diff per commit back); warm: the
// same Reader again, and how long the head's frame then takes a page
// (kept cached: a walk's frames are the first the cache forgets).
func BenchmarkFindStarts(b *testing.B) {
	g := newGitStatus(b)
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for k := range benchCommits {
		g.commit(benchFleet(k), t0.Add(time.Duration(k)*time.Minute))
	}
	g.git(time.Time{}, "repack", "-adq") // as a fetched repository holds them
	open := func(b *testing.B) (*timeline.Reader, ui.Frame) {
		r, err := timeline.Local(g.dir, repo.DefaultStatusBranch, timeline.Options{})
		if err != nil {
			b.Fatal(err)
		}
		head, err := r.Head(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		return r, head
	}
	check := func(b *testing.B, got map[ui.ProblemKey]ui.Start) {
		if len(got) != benchFailing || !got[ui.ProblemKey{Cluster: "c0000", Profile: "web"}].Time.Equal(t0) {
			b.Fatalf("FindStarts found %d starts, c0000/web %v; want %d, %s", len(got), got[ui.ProblemKey{Cluster: "c0000", Profile: "web"}], benchFailing, t0)
		}
	}
	b.Run("cold", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			r, head := open(b)
			b.StartTimer()
			got, err := ui.FindStarts(b.Context(), r, head, ui.SinceBound)
			if err != nil {
				b.Fatal(err)
			}
			check(b, got)
		}
	})
	b.Run("warm", func(b *testing.B) {
		r, head := open(b)
		if _, err := ui.FindStarts(b.Context(), r, head, ui.SinceBound); err != nil {
			b.Fatal(err)
		}
		var headTime time.Duration
		for range b.N {
			got, err := ui.FindStarts(b.Context(), r, head, ui.SinceBound)
			if err != nil {
				b.Fatal(err)
			}
			check(b, got)
			start := time.Now()
			if _, err := r.Head(b.Context()); err != nil { // what a page asks next
				b.Fatal(err)
			}
			headTime += time.Since(start)
		}
		b.ReportMetric(float64(headTime.Microseconds())/float64(b.N), "µs-head-after/op")
	})
}
