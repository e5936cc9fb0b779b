package reconciler

import (
	"fmt"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"strings"
	"sync"
	"testing"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// staticOwnership owns a fixed set of clusters (a narrow fake of a shard
// Member, for the status writers).
type staticOwnership struct {
	id       string
	clusters map[string]bool
	fleet    bool
}

func (o staticOwnership) Owns(c string) bool { return o.clusters[c] }
func (o staticOwnership) OwnsFleet() bool    { return o.fleet }
func (o staticOwnership) Identity() string   { return o.id }

// TestStatusFromManyWriters has three daemons, each owning three
// clusters, commit their records to one status branch of a real Git
// server at the same time, round after round: every push that loses the
// race is retried on top, none is forced, no record of another replica is
// lost, and only the fleet's owner writes fleet.yaml and the dashboard,
// and hands the whole fleet to OnStatus (notifications, commit statuses).
func TestStatusFromManyWriters(t *testing.T) {
	f := newFleetRepo(t)
	f.Commit("fleet", map[string]string{"README.md": "fleet\n"})
	var hs []*harness
	seen := make([][]status.Snapshot, 3)
	for i := range 3 {
		own := staticOwnership{id: fmt.Sprintf("regatta-%d", i), clusters: map[string]bool{}, fleet: i == 0}
		for j := range 3 {
			own.clusters[fmt.Sprintf("c%d", 3*i+j)] = true
		}
		h := newHarness(t, f, func(o *DaemonOptions) {
			o.Ownership = own
			o.OnStatus = func(s status.Snapshot) { seen[i] = append(seen[i], s) }
		})
		// Each store also holds stale records of others' clusters (as
		// restored from the branch): they must not be written.
		for c := range 9 {
			h.d.store.setCluster(status.ClusterStatus{Cluster: fmt.Sprintf("c%d", c), SourceRevision: "stale", Owner: "nobody"})
		}
		hs = append(hs, h)
	}
	for round := 1; round <= 4; round++ {
		rev := fmt.Sprintf("rev%d", round)
		var wg sync.WaitGroup
		errs := make([]error, len(hs))
		for i, h := range hs {
			h.d.store.setFleet(status.Fleet{SourceRevision: rev, AppliedRevision: rev})
			for c := range 9 {
				name := fmt.Sprintf("c%d", c)
				if h.d.auth.may(name) {
					h.d.store.setCluster(status.ClusterStatus{Cluster: name, SourceRevision: rev, Reachable: true, Owner: h.d.auth.name()})
				}
			}
			wg.Go(func() { errs[i] = h.d.commitStatus() })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: replica %d: %v", round, i, err)
			}
		}
		for c := range 9 {
			rec := f.Show("regatta/status", status.ClusterFile(fmt.Sprintf("c%d", c)))
			want := fmt.Sprintf("owner: regatta-%d", c/3)
			if !strings.Contains(rec, "sourceRevision: "+rev) || !strings.Contains(rec, want) {
				t.Errorf("round %d: record of c%d:\n%s", round, c, rec)
			}
		}
	}
	// The fleet-wide files come from the fleet's owner only; its last
	// commit saw every record but possibly not the last round's of others.
	if fleet := f.Show("regatta/status", status.FleetFile); !strings.Contains(fleet, "rev4") {
		t.Errorf("fleet.yaml:\n%s", fleet)
	}
	dash := f.Show("regatta/status", status.Dashboard)
	for c := range 9 {
		if !strings.Contains(dash, fmt.Sprintf("c%d", c)) {
			t.Errorf("dashboard lacks c%d:\n%s", c, dash)
		}
	}
	// At its next status interval, with nothing of its own new, the
	// fleet's owner shows the others' last round too (its last push may
	// have gone on top of theirs, from records read before).
	if err := hs[0].d.commitStatus(); err != nil {
		t.Fatal(err)
	}
	if len(seen[1])+len(seen[2]) != 0 || len(seen[0]) == 0 {
		t.Errorf("OnStatus calls by replica: %d, %d, %d; want the fleet's owner's only", len(seen[0]), len(seen[1]), len(seen[2]))
	} else if last := seen[0][len(seen[0])-1]; len(last.Clusters) != 9 {
		t.Errorf("the fleet's owner handed OnStatus %d clusters, want the whole fleet (9)", len(last.Clusters))
	} else {
		for _, c := range last.Clusters {
			if c.SourceRevision != "rev4" {
				t.Errorf("the fleet's owner's last OnStatus shows %s at %s, want rev4", c.Cluster, c.SourceRevision)
			}
		}
	}
	log := gitfleet.Git(t, f.Bare, "log", "--format=%H %P", "regatta/status")
	for _, l := range strings.Split(log, "\n") {
		if len(strings.Fields(l)) > 2 {
			t.Errorf("a merge commit on the status branch: %s", l)
		}
	}
}
