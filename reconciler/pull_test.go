package reconciler

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler/agent"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/spec"
)

// A cross-cluster event pair that involves a pulled cluster, as source or
// destination, fails at run time too (a classifier label can make a pulled
// cluster match after validation); a local event pair does not.
func TestPulledEventsRefused(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	fsys := fstest.MapFS{
		"clusters/edge/cluster.yaml": file("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: edge}\nspec: {mode: pull}\n"),
		"clusters/hub/cluster.yaml":  file("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: hub}\nspec: {}\n"),
		"events/svc.yaml":            file("apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: svc}\nspec:\n  resourceSelectors: [{version: v1, kind: Service}]\n"),
		"addons/a/cm.yaml":           file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 'a-{{ .Event.Name }}', namespace: default}\n"),
		"profiles/cross.yaml": file(`apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: cross}
spec:
  clusterSelector: {matchLabels: {tier: edge}}
  eventTrigger: {eventSourceName: svc, destinationClusterSelector: {matchLabels: {role: hub}}}
  addons: [{name: a, template: true, manifests: {path: addons/a}}]
`),
		"profiles/local.yaml": file(`apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: local}
spec:
  clusterSelector: {matchLabels: {tier: edge}}
  eventTrigger: {eventSourceName: svc}
  addons: [{name: a, template: true, manifests: {path: addons/a}}]
`),
	}
	repo, diags := spec.Load(fsys)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	edge, hub := repo.Cluster("edge"), repo.Cluster("hub")
	err := pulledEvents(repo.Profile("cross"), hub, []*spec.Cluster{edge})
	if err == nil || !strings.Contains(err.Error(), "cluster edge is pulled") {
		t.Errorf("a pulled source: %v", err)
	}
	if err := pulledEvents(repo.Profile("cross"), edge, []*spec.Cluster{hub}); err == nil {
		t.Error("a pulled destination was not refused")
	}
	if err := pulledEvents(repo.Profile("local"), edge, []*spec.Cluster{edge}); err != nil {
		t.Errorf("a local event pair on a pulled cluster: %v", err)
	}
}

// TestAgentCommitsOnlyItsOwnRecord: an agent's status commit holds
// fleet.yaml and its own cluster's record, on an orphan branch of its own;
// other clusters' records it holds (restored, peers) and the dashboards
// are never written there.
func TestAgentCommitsOnlyItsOwnRecord(t *testing.T) {
	f := newFleetRepo(t)
	f.Commit("fleet", map[string]string{"README.md": "fleet\n"})
	h := newHarness(t, f, func(o *DaemonOptions) {
		o.Agent, o.StatusBranch = &AgentCluster{Name: "edge"}, "regatta-status/edge"
	})
	h.d.store.setFleet(status.Fleet{SourceRevision: "rev1", AppliedRevision: "rev1"})
	h.d.store.setCluster(status.ClusterStatus{Cluster: "edge", SourceRevision: "rev1", Reachable: true})
	h.d.store.setCluster(status.ClusterStatus{Cluster: "prod", SourceRevision: "rev1", Reachable: true})
	if err := h.d.commitStatus(); err != nil {
		t.Fatal(err)
	}
	files := gitfleet.Git(t, f.Bare, "ls-tree", "-r", "--name-only", "regatta-status/edge")
	if files != "status/clusters/edge.yaml\nstatus/fleet.yaml" {
		t.Errorf("the agent's ref holds:\n%s", files)
	}
	if n := f.Commits("regatta-status/edge"); n != 1 {
		t.Errorf("the agent's ref has %d commits, want 1 (an orphan)", n)
	}
	if rec := f.Show("regatta-status/edge", "status/clusters/edge.yaml"); !strings.Contains(rec, "mode: pull") {
		t.Errorf("the agent's record:\n%s", rec)
	}
}

// TestShardedOwnerShowsPulledClusters: with replicas, the replica that
// owns a pulled cluster (it records the cluster's handover turn) copies
// its record (as its agent committed it) to the status branch, and keeps
// it there at its next commits; another replica, the fleet's owner
// included, never writes it.
func TestShardedOwnerShowsPulledClusters(t *testing.T) {
	f := newFleetRepo(t)
	f.Commit("fleet", map[string]string{"README.md": "fleet\n"})
	edge := status.ClusterStatus{Cluster: "edge", SourceRevision: "rev1", Reachable: true, Mode: spec.ModePull, Owner: "agent:edge"}
	var hs []*harness
	for i := range 2 {
		own := staticOwnership{id: fmt.Sprintf("regatta-%d", i), clusters: map[string]bool{fmt.Sprintf("c%d", i): true, "edge": i == 1}, fleet: i == 0}
		h := newHarness(t, f, func(o *DaemonOptions) { o.Ownership = own })
		h.d.peers = peerRecords{"edge": edge}
		h.d.store.setPeer(edge)
		hs = append(hs, h)
	}
	for round, rev := range []string{"rev1", "rev2"} {
		for _, h := range hs {
			h.d.store.setFleet(status.Fleet{SourceRevision: rev, AppliedRevision: rev})
			for c := range 2 {
				if name := fmt.Sprintf("c%d", c); h.d.auth.may(name) {
					h.d.store.setCluster(status.ClusterStatus{Cluster: name, SourceRevision: rev, Reachable: true, Owner: h.d.auth.name()})
				}
			}
			if err := h.d.commitStatus(); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		rec := f.Lookup("regatta/status", status.ClusterFile("edge"))
		if !strings.Contains(rec, "owner: agent:edge") || !strings.Contains(rec, "mode: pull") || !strings.Contains(rec, "generation: 1\n") {
			t.Errorf("round %d: the pulled cluster's record on the status branch:\n%s", round, rec)
		}
	}
}

// TestShardedHandoverByTheClustersOwnerOnly: of a sharded fleet, the
// replica that owns a cluster switched to pull records the release, and
// only once its pass in flight ended; the replica that owns the fleet
// (whose passes never touch the cluster) neither releases it nor writes
// its record.
func TestShardedHandoverByTheClustersOwnerOnly(t *testing.T) {
	f := newFleetRepo(t)
	sha := f.Commit("x pulled", map[string]string{
		"clusters/x/cluster.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: x}\nspec: {mode: pull}\n",
	})
	owner := newHarness(t, f, func(o *DaemonOptions) {
		o.Ownership = staticOwnership{id: "owner", clusters: map[string]bool{"x": true}}
	})
	fleet := newHarness(t, f, func(o *DaemonOptions) { o.Ownership = staticOwnership{id: "fleet", fleet: true} })
	ctx := t.Context()
	for _, h := range []*harness{owner, fleet} {
		h.d.opts.Peers = &agent.Refs{Source: h.src}
		h.loadRevision(t, sha)
		h.d.store.setFleet(status.Fleet{SourceRevision: sha, AppliedRevision: sha})
	}
	owner.d.hand.init()
	owner.d.hand.inFlight["x"] = 1 // a pass of x, started before the switch
	round := func() string {
		for _, h := range []*harness{owner, fleet} {
			h.d.refreshPeers(ctx)
			h.d.handoverTick(ctx, func(string) {})
			if err := h.d.commitStatus(); err != nil {
				t.Fatal(err)
			}
		}
		return f.Lookup("regatta/status", "status/clusters/x.yaml")
	}
	if rec := round(); strings.Contains(rec, "handover") {
		t.Fatalf("x released while its owner's pass was in flight:\n%s", rec)
	}
	(&grant{a: owner.d.auth, cluster: "x"}).release() // the pass ends
	if rec := round(); !strings.Contains(rec, "turn: 1") {
		t.Fatalf("x not released by its owner once its pass ended:\n%s", rec)
	}
	if fleet.d.writesRecord("x") {
		t.Error("the fleet's owner writes the record of a cluster it does not own")
	}
}

// TestCentralKeepsATurnHandedOverAhead: an agent whose cluster went back
// to push at a revision the central daemon has not loaded yet hands the
// cluster over (turn 2) and stops. The central daemon, still at the
// revision that has the cluster pulled, keeps that turn instead of
// handing it straight back (turn 3, to an agent that is gone), and writes
// to the cluster once it loads the new revision. A turn handed over at a
// revision the branch no longer has (rewritten) holds nothing back.
func TestCentralKeepsATurnHandedOverAhead(t *testing.T) {
	f := newFleetRepo(t)
	pulled := "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: x}\nspec: {mode: pull}\n"
	v1 := f.Commit("x pulled", map[string]string{"clusters/x/cluster.yaml": pulled})
	h := newHarness(t, f, nil)
	h.d.opts.Peers = &agent.Refs{Source: h.src}
	ctx := t.Context()
	load := func(sha string) { t.Helper(); h.loadRevision(t, sha) }
	turn := func() int64 {
		h.d.hand.mu.Lock()
		defer h.d.hand.mu.Unlock()
		return h.d.hand.own["x"]
	}
	agentHands := func(turn int64, at string) {
		t.Helper()
		rec := status.ClusterStatus{Cluster: "x", Mode: "pull", Handover: &status.Handover{Turn: turn, Revision: at}}
		files, err := status.Files(status.Snapshot{Clusters: []status.ClusterStatus{rec}})
		if err != nil {
			t.Fatal(err)
		}
		file := status.ClusterFile("x")
		if _, err := h.src.CommitAndPush(ctx, repo.CommitRequest{Branch: agent.StatusRef("x"), Prefix: status.Dir,
			Files: map[string][]byte{file: files[file]}, Message: "agent"}); err != nil {
			t.Fatal(err)
		}
	}
	load(v1)
	h.d.handoverTick(ctx, func(string) {})
	if got := turn(); got != 1 {
		t.Fatalf("at v1 the central daemon recorded turn %d, want its release (1)", got)
	}
	agentHands(1, v1) // the agent takes it

	v2 := f.Commit("x pushed", map[string]string{"clusters/x/cluster.yaml": strings.Replace(pulled, "mode: pull", "mode: push", 1)})
	agentHands(2, v2) // the agent loaded v2 first, released and stopped
	h.d.handoverTick(ctx, func(string) {})
	if got := turn(); got != 1 {
		t.Fatalf("still at v1, the central daemon recorded turn %d; it must keep turn 2, handed over at v2", got)
	}
	load(v2)
	h.d.handoverTick(ctx, func(string) {})
	if !h.d.auth.may("x") {
		h.d.hand.mu.Lock()
		t.Fatalf("at v2 the central daemon may not write to x: own %d, other %d", h.d.hand.own["x"], h.d.hand.other["x"])
	}

	// back to pull; the agent's turn now names a revision the branch
	// never had: the central daemon at v3 releases without waiting
	v3 := f.Commit("x pulled again", map[string]string{"clusters/x/cluster.yaml": pulled})
	load(v3)
	agentHands(2, strings.Repeat("ab", 20))
	h.d.handoverTick(ctx, func(string) {})
	if got := turn(); got != 3 {
		t.Fatalf("at v3 the central daemon recorded turn %d, want its release (3)", got)
	}
}

// loadRevision syncs the harness's source and makes sha the revision in
// force, as the daemon's intake does.
func (h *harness) loadRevision(t *testing.T, sha string) {
	t.Helper()
	if _, _, err := h.src.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	tree, err := h.src.Tree(t.Context(), sha)
	if err != nil {
		t.Fatal(err)
	}
	var fl status.Fleet
	if h.r.accept(sha, tree, &fl) == nil {
		t.Fatalf("revision not accepted: %+v", fl)
	}
}
