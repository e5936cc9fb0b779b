package history_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler/status/history"
	"github.com/regatta-dev/regatta/repo"
)

// source is a clone of a fleet repository on a real Git server, as the
// daemon has one, after its first fetch.
func source(t *testing.T) (*repo.Source, *gitfleet.Repo, string) {
	t.Helper()
	f := gitfleet.New(t)
	rev := f.Commit("fleet", map[string]string{"README.md": "fleet\n"})
	src, err := repo.NewSource(repo.Options{URL: f.URL, Auth: repo.Auth{Username: gitfleet.User, Password: gitfleet.Password}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return src, f, rev
}

func statusCommit(t *testing.T, src *repo.Source, rev string, i int) {
	t.Helper()
	res, err := src.CommitAndPush(context.Background(), repo.CommitRequest{
		Branch: repo.DefaultStatusBranch, Prefix: "status",
		Files:    map[string][]byte{"status/clusters/c1.yaml": fmt.Appendf(nil, "cluster: c1\ngeneration: %d\n", i)},
		Message:  "regatta: status",
		Trailers: []repo.Trailer{{Key: repo.TrailerSourceRevision, Value: rev}},
	})
	if err != nil || !res.Committed {
		t.Fatalf("status commit %d: %+v %v", i, res, err)
	}
}

// TestRetentionBoundsTheBranch: with Keep 3, a status branch that receives
// 10 commits never holds more than twice Keep commits, ends with Keep, and
// its tip still reads the last record.
func TestRetentionBoundsTheBranch(t *testing.T) {
	src, f, rev := source(t)
	r := history.New(src, 3, nil)
	ctx := context.Background()
	folds := 0
	for i := range 10 {
		statusCommit(t, src, rev, i)
		res, err := r.Committed(ctx, repo.DefaultStatusBranch)
		if err != nil {
			t.Fatal(err)
		}
		if res.Folded {
			folds++
		}
		if n := f.Commits(repo.DefaultStatusBranch); n > 2*r.Keep {
			t.Fatalf("after status commit %d the branch holds %d commits, more than twice Keep %d", i, n, r.Keep)
		}
	}
	if n := f.Commits(repo.DefaultStatusBranch); n != 3 || folds != 3 {
		t.Fatalf("the branch holds %d commits after %d folds, want 3 after 3", n, folds)
	}
	if got := f.Show(repo.DefaultStatusBranch, "status/clusters/c1.yaml"); got != "cluster: c1\ngeneration: 9" {
		t.Fatalf("the tip reads %q", got)
	}
}

// TestRetentionOff: Keep 0 never folds.
func TestRetentionOff(t *testing.T) {
	src, f, rev := source(t)
	r := history.New(src, 0, nil)
	for i := range 4 {
		statusCommit(t, src, rev, i)
		if r.Due() {
			t.Fatal("a retention of 0 commits is due")
		}
		if res, err := r.Committed(context.Background(), repo.DefaultStatusBranch); err != nil || res.Folded {
			t.Fatalf("%+v %v", res, err)
		}
	}
	if n := f.Commits(repo.DefaultStatusBranch); n != 4 {
		t.Fatalf("the branch holds %d commits, want all 4", n)
	}
}

// TestRetentionFoldsOnlyItsBranch: an agent's retention folds its own ref
// (regatta-status/<name>), the branch it committed to, and leaves the
// central status branch as it is.
func TestRetentionFoldsOnlyItsBranch(t *testing.T) {
	src, f, rev := source(t)
	for i := range 3 {
		statusCommit(t, src, rev, i) // the central daemon's
	}
	const ref = "regatta-status/edge-1"
	r := history.New(src, 1, nil)
	for i := range 3 {
		res, err := src.CommitAndPush(context.Background(), repo.CommitRequest{Branch: ref, Prefix: "status",
			Files: map[string][]byte{"status/clusters/edge-1.yaml": fmt.Appendf(nil, "cluster: edge-1\ngeneration: %d\n", i)}})
		if err != nil || !res.Committed {
			t.Fatalf("agent status commit %d: %+v %v", i, res, err)
		}
		if _, err := r.Committed(context.Background(), ref); err != nil {
			t.Fatal(err)
		}
	}
	if a, c := f.Commits(ref), f.Commits(repo.DefaultStatusBranch); a != 1 || c != 3 {
		t.Fatalf("the agent's ref holds %d commits (want 1), the central branch %d (want 3, untouched)", a, c)
	}
}
