package agent

import (
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
)

// TestReleaseRefusesARefThatMoved: regatta release-agent records the next
// turn on the agent's ref only when the ref still holds what it read; an
// agent that wrote its ref in between (it is alive) keeps its record and
// the release fails saying so. Then, read again, the release goes through.
// Against a real Git server.
func TestReleaseRefusesARefThatMoved(t *testing.T) {
	fleet := gitfleet.New(t)
	fleet.Commit("fleet", map[string]string{"README.md": "fleet\n"})
	src, err := repo.NewSource(repo.Options{URL: fleet.URL, Auth: repo.Auth{Username: gitfleet.User, Password: gitfleet.Password}})
	if err != nil {
		t.Fatal(err)
	}
	const cluster = "edge-1"
	agentWrites := func(turn int64) {
		t.Helper()
		rec := status.ClusterStatus{Cluster: cluster, Mode: "pull", Reachable: true, Handover: &status.Handover{Turn: turn}}
		files, err := status.Files(status.Snapshot{Clusters: []status.ClusterStatus{rec}})
		if err != nil {
			t.Fatal(err)
		}
		file := status.ClusterFile(cluster)
		if _, err := src.CommitAndPush(t.Context(), repo.CommitRequest{Branch: StatusRef(cluster), Prefix: status.Dir,
			Files: map[string][]byte{file: files[file]}, Message: "agent"}); err != nil {
			t.Fatal(err)
		}
	}
	agentWrites(1)
	r, err := readRelease(t.Context(), src, cluster, "regatta/status")
	if err != nil || r.read != 1 || r.turn != 1 {
		t.Fatalf("read: %+v, %v", r, err)
	}
	agentWrites(3) // the agent is alive: it switched again meanwhile
	_, err = r.write(t.Context(), src, repo.Signature{})
	if err == nil || !strings.Contains(err.Error(), "moved while it was read") {
		t.Fatalf("release over a moved ref: %v", err)
	}
	if got := turnOnRef(t, src, cluster); got != 3 {
		t.Fatalf("the agent's record was overwritten: turn %d, want 3", got)
	}

	res, err := Release(t.Context(), src, cluster, "regatta/status", repo.Signature{})
	if err != nil || !res.Released || res.Turn != 4 {
		t.Fatalf("release read afresh: %+v, %v", res, err)
	}
	if got := turnOnRef(t, src, cluster); got != 4 {
		t.Fatalf("turn on the ref after the release: %d, want 4", got)
	}
}

// turnOnRef is the handover turn of the cluster's record on its agent's ref.
func turnOnRef(t *testing.T, src *repo.Source, cluster string) int64 {
	t.Helper()
	rec, err := (&Refs{Source: src}).own(t.Context(), cluster)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Handover == nil {
		return 0
	}
	return rec.Handover.Turn
}
