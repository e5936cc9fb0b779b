package reconciler

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler/status"
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

// TestShardedFleetOwnerShowsPulledClusters: with replicas, the fleet's
// owner copies a pulled cluster's record (as its agent committed it) to the
// status branch, and keeps it there at its next commits; another replica
// never writes it.
func TestShardedFleetOwnerShowsPulledClusters(t *testing.T) {
	f := newFleetRepo(t)
	f.Commit("fleet", map[string]string{"README.md": "fleet\n"})
	edge := status.ClusterStatus{Cluster: "edge", SourceRevision: "rev1", Reachable: true, Mode: spec.ModePull, Owner: "agent:edge"}
	var hs []*harness
	for i := range 2 {
		own := staticOwnership{id: fmt.Sprintf("regatta-%d", i), clusters: map[string]bool{fmt.Sprintf("c%d", i): true}, fleet: i == 0}
		h := newHarness(t, f, func(o *DaemonOptions) { o.Ownership = own })
		h.d.peers = peerRecords{"edge": edge}
		h.d.store.setPeer(edge)
		hs = append(hs, h)
	}
	for round, rev := range []string{"rev1", "rev2"} {
		for _, h := range hs {
			h.d.store.setFleet(status.Fleet{SourceRevision: rev, AppliedRevision: rev})
			for c := range 2 {
				if name := fmt.Sprintf("c%d", c); h.d.owns(name) {
					h.d.store.setCluster(status.ClusterStatus{Cluster: name, SourceRevision: rev, Reachable: true, Owner: h.d.identity()})
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
