package reconciler

import (
	"testing"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// TestFleetOwnerShowsPeersRecords: the replica that owns the fleet writes
// the fleet-wide status again when another replica committed its records,
// though none of its own changed, so that OnStatus (notifications, commit
// statuses) and the dashboard show the whole fleet; with nothing new on
// the branch it writes nothing.
func TestFleetOwnerShowsPeersRecords(t *testing.T) {
	f := newFleetRepo(t)
	f.Commit("fleet", map[string]string{"README.md": "fleet\n"})
	var seen []status.Snapshot
	owner := newHarness(t, f, func(o *DaemonOptions) {
		o.Ownership = staticOwnership{id: "regatta-0", clusters: map[string]bool{"c0": true}, fleet: true}
		o.OnStatus = func(s status.Snapshot) { seen = append(seen, s) }
	})
	peer := newHarness(t, f, func(o *DaemonOptions) {
		o.Ownership = staticOwnership{id: "regatta-1", clusters: map[string]bool{"c1": true}}
	})
	for i, h := range []*harness{owner, peer} {
		name := []string{"c0", "c1"}[i]
		h.d.store.setFleet(status.Fleet{SourceRevision: "rev1", AppliedRevision: "rev1"})
		h.d.store.setCluster(status.ClusterStatus{Cluster: name, SourceRevision: "rev1", Reachable: true, Owner: h.d.auth.name()})
		if err := h.d.commitStatus(); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 1 || len(seen[0].Clusters) != 1 {
		t.Fatalf("OnStatus after the owner's first commit: %v, want c0 alone (the peer had not committed)", seen)
	}
	if err := owner.d.commitStatus(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || len(seen[1].Clusters) != 2 {
		t.Fatalf("OnStatus calls %d, the last with %v; want a second with c0 and the peer's c1", len(seen), seen[len(seen)-1].Clusters)
	}
	if err := owner.d.commitStatus(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Errorf("OnStatus called %d times; nothing new on the branch should call it no more", len(seen))
	}
}
