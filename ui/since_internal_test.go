package ui

import (
	"github.com/regatta-dev/regatta/reconciler/status"
	"testing"
	"time"
)

// settle waits until s knows since when its head's problems have been so
// (a page answered after it holds the marks and the version stays).
func settle(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, _, err := s.head(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.since.lookup(f); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no starts for head %s after 10s", frameKey(f))
		}
		s.since.kick()
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSinceText(t *testing.T) {
	now := time.Date(2026, 12, 8, 17, 14, 30, 0, time.UTC)
	for _, tt := range []struct {
		st   Start
		want string
	}{
		{Start{Time: now.Add(-3*time.Hour - 12*time.Minute)}, "for 3h12m, since 14:02 UTC"},
		{Start{Time: now.Add(-40 * time.Second)}, "for 40s, since 17:13 UTC"},
		{Start{Time: now.Add(-9 * time.Minute)}, "for 9m, since 17:05 UTC"},
		{Start{Time: now.Add(-20 * time.Hour), Before: true}, "for over 20h00m, since before 2026-12-07 21:14 UTC"},
		{Start{Time: now.Add(-75 * time.Hour)}, "for 3d3h, since 2026-12-05 14:14 UTC"},
	} {
		m := markOf(tt.st, now)
		if m.Text != tt.want || m.At != tt.st.Time.Format(time.RFC3339) || m.Before != tt.st.Before {
			t.Errorf("markOf(%v) = %+v; want %q", tt.st, m, tt.want)
		}
	}
}

// Where a fold of the history ends the walk, the problems still open
// began before its oldest commit; at the branch's first commit, at it.
func TestFindStartsFolded(t *testing.T) {
	failing := func(rev string) Frame {
		return Frame{Commit: rev, Time: t1.Add(time.Duration(len(rev)) * time.Minute), Snapshot: snapshotOf(rev,
			status.ClusterStatus{Cluster: "a", Reachable: true, Profiles: []status.Profile{{Name: "web", State: status.StateConflict}}})}
	}
	for _, folded := range []bool{true, false} {
		h := &memHistory{folded: folded}
		h.add(failing("c1"))
		h.add(failing("c22"))
		head := failing("c333")
		h.add(head)
		got, err := FindStarts(t.Context(), h, head, 100)
		want := Start{Time: t1.Add(2 * time.Minute), Before: folded}
		if s := got[ProblemKey{"a", "web"}]; err != nil || len(got) != 1 || !s.Time.Equal(want.Time) || s.Before != want.Before {
			t.Errorf("folded %v: FindStarts = %v, %v; want a/web %v", folded, got, err, want)
		}
	}
}
