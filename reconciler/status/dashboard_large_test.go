package status

import (
	"fmt"
	"strings"
	"testing"
)

// TestDashboardLargeFleetStaysReadable: with 1,000 clusters, two of them
// failing, the dashboard shows the summary and the failures first and
// lists only the clusters that need a look: the healthy ones are counted,
// not drawn as 998 rows (their files are under status/clusters/).
func TestDashboardLargeFleetStaysReadable(t *testing.T) {
	rev := "abc123def4560000000000000000000000000000"
	s := Snapshot{Fleet: Fleet{SourceRevision: rev, AppliedRevision: rev}}
	for i := range 1000 {
		c := ClusterStatus{Cluster: fmt.Sprintf("c%04d", i), Reachable: true, KubernetesVersion: "v1.37.2",
			Profiles: []Profile{{Name: "fa", State: StateApplied, Revision: rev}, {Name: "fb", State: StateApplied, Revision: rev}}}
		if i == 17 || i == 940 {
			c.Profiles[1] = Profile{Name: "fb", State: StateFailed, Revision: rev, Error: &Error{Object: "ConfigMap/x/y", Message: "apply failed"}}
		}
		s.Clusters = append(s.Clusters, c)
	}
	got := RenderDashboard(s)
	lines := strings.Split(got, "\n")
	if len(lines) > 60 {
		t.Errorf("dashboard of 1,000 clusters has %d lines, want at most 60:\n%s", len(lines), strings.Join(lines[:80], "\n"))
	}
	summary, problems, table := strings.Index(got, "Pairs: 1998 Applied, 2 Failed"), strings.Index(got, "## Problems"), strings.Index(got, "| cluster |")
	if summary < 0 || problems < 0 || table < 0 || !(summary < problems && problems < table) {
		t.Errorf("want the summary, then the problems, then the table (at %d, %d, %d):\n%s", summary, problems, table, got)
	}
	for _, want := range []string{"| c0017 |", "| c0940 |", "**c0017 / fb** (Failed)", "998 clusters with every pair Applied"} {
		if !strings.Contains(got, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	if strings.Contains(got, "| c0018 |") {
		t.Error("a healthy cluster of a large fleet has a row of its own")
	}
}

// TestDashboardManyProblemsBounded: when every cluster of a large fleet
// fails, the problems list is cut with a count of the rest.
func TestDashboardManyProblemsBounded(t *testing.T) {
	s := Snapshot{}
	for i := range 1000 {
		s.Clusters = append(s.Clusters, ClusterStatus{Cluster: fmt.Sprintf("c%04d", i), Reachable: false, Error: "connection refused",
			Profiles: []Profile{{Name: "fa", State: StateFailed, Error: &Error{Message: "cluster unreachable"}}}})
	}
	got := RenderDashboard(s)
	if n := strings.Count(got, "\n"); n > 2*maxDashboardRows+40 {
		t.Errorf("dashboard of 1,000 failing clusters has %d lines", n)
	}
	if !strings.Contains(got, "more problems: see `status/clusters/`") {
		t.Errorf("the cut problems list does not say how many more:\n%s", got[len(got)-400:])
	}
}
