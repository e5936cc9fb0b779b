package reconciler

import (
	"context"
	"strings"
	"sync"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// handOwnership is an Ownership the test moves by hand.
type handOwnership struct {
	id    string
	fleet bool
	mu    sync.Mutex
	owns  map[string]bool
}

func (o *handOwnership) Owns(c string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.owns[c]
}
func (o *handOwnership) OwnsFleet() bool  { return o.fleet }
func (o *handOwnership) Identity() string { return o.id }
func (o *handOwnership) set(c string, owns bool) {
	o.mu.Lock()
	o.owns[c] = owns
	o.mu.Unlock()
}

func pausedClusterFiles(name string) map[string]string {
	return map[string]string{"clusters/" + name + "/cluster.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: " + name + ", labels: {env: prod}}\nspec: {paused: true}\n"}
}

// branchRecord reads a cluster's record on the status branch at rev.
func branchRecord(t *testing.T, f *fleetRepo, rev, cluster string) status.ClusterStatus {
	t.Helper()
	var c status.ClusterStatus
	if err := yaml.Unmarshal([]byte(f.Show(rev, status.ClusterFile(cluster))), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestStatusHandoverNeverGoesBack moves a cluster between two replicas by
// hand, step by step: replica B, started (and seeded from the status
// branch) while A owned the cluster, gains it and commits status before
// it reconciled it; A, which lost it, commits once more. Neither puts the
// record back to what B was seeded with; B's own record lands once it
// reconciled the cluster; and the record's generation grows with every
// write, through every commit of the branch.
func TestStatusHandoverNeverGoesBack(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	rev1 := f.Commit("fleet", merge(pausedClusterFiles("hand-1"), probeProfile("v1")))
	a := &handOwnership{id: "replica-a", fleet: true, owns: map[string]bool{"hand-1": true}}
	b := &handOwnership{id: "replica-b", owns: map[string]bool{}}
	ha := newHarness(t, f, func(o *DaemonOptions) { o.Ownership = a })
	hb := newHarness(t, f, func(o *DaemonOptions) { o.Ownership = b })
	ha.d.RunOnce(ctx)
	hb.d.RunOnce(ctx) // B starts: seeded with A's record of rev1
	rev2 := f.Commit("v2", probeProfile("v2"))
	ha.d.RunOnce(ctx)
	if r := branchRecord(t, f, "regatta/status", "hand-1"); r.SourceRevision != rev2 || r.Owner != "replica-a" || r.Generation != 2 {
		t.Fatalf("A's record of rev2: %s owner %s generation %d", status.ShortRevision(r.SourceRevision), r.Owner, r.Generation)
	}

	// hand-1 moves from A to B; B commits before it reconciled hand-1
	a.set("hand-1", false)
	ha.d.OwnershipChanged()
	b.set("hand-1", true)
	hb.d.OwnershipChanged()
	hb.d.store.touch()
	if err := hb.d.commitStatus(); err != nil {
		t.Fatal(err)
	}
	ha.d.store.touch() // A, which lost it, commits again
	if err := ha.d.commitStatus(); err != nil {
		t.Fatal(err)
	}
	// A's commit in flight when it lost hand-1 re-checks at the attempt
	rec := []byte(f.Show("regatta/status", status.ClusterFile("hand-1")))
	if _, write := ha.d.writeRecord(status.ClusterFile("hand-1"), rec, true, []byte("cluster: hand-1\nsourceRevision: "+rev1+"\n")); write {
		t.Error("a replica that lost the cluster would write its record at the commit")
	}
	if r := branchRecord(t, f, "regatta/status", "hand-1"); r.SourceRevision != rev2 || r.Owner != "replica-a" {
		t.Fatalf("the record went back: %s owner %s (rev1 %s, rev2 %s)", status.ShortRevision(r.SourceRevision), r.Owner,
			status.ShortRevision(rev1), status.ShortRevision(rev2))
	}

	hb.d.RunOnce(ctx) // B reconciles hand-1
	if r := branchRecord(t, f, "regatta/status", "hand-1"); r.SourceRevision != rev2 || r.Owner != "replica-b" || r.Generation != 3 {
		t.Fatalf("B's record: %s owner %s generation %d", status.ShortRevision(r.SourceRevision), r.Owner, r.Generation)
	}
	checkRecordHistory(t, f, "hand-1")
}

// checkRecordHistory walks the status branch's commits, oldest first:
// the cluster's record never lowers its generation nor leaves a revision
// for an older one.
func checkRecordHistory(t *testing.T, f *fleetRepo, cluster string) {
	t.Helper()
	order := map[string]int{}
	for i, rev := range strings.Fields(gitfleet.Git(t, f.Bare, "rev-list", "--reverse", "main")) {
		order[rev] = i
	}
	last, lastRev := int64(0), -1
	for _, c := range strings.Fields(gitfleet.Git(t, f.Bare, "rev-list", "--reverse", "regatta/status")) {
		if !hasFile(f, c, status.ClusterFile(cluster)) {
			continue
		}
		r := branchRecord(t, f, c, cluster)
		if r.Generation < last || order[r.SourceRevision] < lastRev {
			t.Errorf("commit %s puts %s back: generation %d after %d, revision #%d after #%d",
				status.ShortRevision(c), cluster, r.Generation, last, order[r.SourceRevision], lastRev)
		}
		last, lastRev = r.Generation, order[r.SourceRevision]
	}
}

func hasFile(f *fleetRepo, rev, file string) bool {
	return strings.Contains(runGitOK(f.Bare, "ls-tree", "--name-only", rev, file), file)
}
