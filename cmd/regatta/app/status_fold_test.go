package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/reconciler/status/history"
	"github.com/regatta-dev/regatta/repo"
)

// foldedFleet is a fleet repository on a real Git server whose status
// branch received commits records by records (the last one: prod-4
// Failed), then was folded to keep 2 commits by the daemon's retention; a
// user clone was made before the fold.
func foldedFleet(t *testing.T) (f *gitfleet.Repo, clone string) {
	t.Helper()
	f = gitfleet.New(t)
	rev := f.Commit("fleet", map[string]string{"README.md": "fleet\n"})
	src, err := repo.NewSource(repo.Options{URL: f.URL, Auth: repo.Auth{Username: gitfleet.User, Password: gitfleet.Password}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := src.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	snap := status.Snapshot{Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: rev}}
	for i := range 5 {
		state := status.StateApplied
		if i == 4 {
			state = status.StateFailed
		}
		snap.Clusters = append(snap.Clusters, status.ClusterStatus{Cluster: fmt.Sprintf("prod-%d", i), Reachable: true,
			KubernetesVersion: "v1.37.2", Profiles: []status.Profile{{Name: "apps", State: state, Revision: rev, Objects: i}}})
		files, err := status.Files(snap)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.CommitAndPush(ctx, repo.CommitRequest{Branch: repo.DefaultStatusBranch, Prefix: status.Dir, Files: files, Prune: true,
			Message: "regatta: status", Trailers: []repo.Trailer{{Key: repo.TrailerSourceRevision, Value: rev}}}); err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			clone = filepath.Join(t.TempDir(), "clone")
			gitfleet.Git(t, f.Work, "clone", "-q", f.Bare, clone)
		}
	}
	r := history.New(src, 2, nil)
	if res, err := r.Committed(ctx, repo.DefaultStatusBranch); err != nil || !res.Folded {
		t.Fatalf("fold: %+v %v", res, err)
	}
	if n := f.Commits(repo.DefaultStatusBranch); n != 2 {
		t.Fatalf("the folded status branch holds %d commits", n)
	}
	return f, clone
}

// TestStatusAcrossFold: `regatta status` reads the same records after the
// status branch's history was folded: from a clone that fetched after the
// fold (git fetch follows the rewritten branch), and from the remote with
// --repo; a clone of the followed branch alone has no status branch.
func TestStatusAcrossFold(t *testing.T) {
	f, clone := foldedFleet(t)
	code, stdout, stderr := run(t, "status", clone)
	if code != 0 || !strings.Contains(stdout, "prod-3") || strings.Contains(stdout, "prod-4") {
		t.Fatalf("before its fetch the clone shows the status it cloned (exit %d):\n%s%s", code, stdout, stderr)
	}
	gitfleet.Git(t, clone, "fetch", "-q", "origin")
	want := []string{"prod-0", "prod-3", "prod-4", "Failed"}
	code, stdout, stderr = run(t, "status", clone)
	for _, w := range want {
		if code != 0 || !strings.Contains(stdout, w) {
			t.Fatalf("after the fold and a fetch, status lacks %q (exit %d):\n%s%s", w, code, stdout, stderr)
		}
	}
	pw := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pw, []byte(gitfleet.Password), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "status", "--repo", f.URL, "--git-username", gitfleet.User, "--git-password-file", pw)
	for _, w := range want {
		if code != 0 || !strings.Contains(stdout, w) {
			t.Fatalf("status --repo after the fold lacks %q (exit %d):\n%s%s", w, code, stdout, stderr)
		}
	}
	main := filepath.Join(t.TempDir(), "main-only")
	gitfleet.Git(t, f.Work, "clone", "-q", "--single-branch", "-b", "main", f.Bare, main)
	if code, _, stderr := run(t, "status", main); code != 1 || !strings.Contains(stderr, "no status branch") {
		t.Fatalf("a clone of main alone: exit %d, %s", code, stderr)
	}
	if got := gitfleet.Git(t, main, "branch", "-r"); strings.Contains(got, repo.DefaultStatusBranch) {
		t.Fatalf("git clone --single-branch -b main fetched the status branch: %s", got)
	}
}

// TestStatusHistoryKeepRefused: a retention the daemon could not apply
// stops `regatta run` at start with a usage error naming the fix.
func TestStatusHistoryKeepRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--status-branch", "main", "--status-history-keep", "100"}, "the status branch is the followed branch main"},
		{[]string{"--status-branch", "", "--status-history-keep", "100"}, "needs a status branch"},
		{[]string{"--status-history-keep", "-1"}, "a number of commits"},
	} {
		code, _, stderr := run(t, append([]string{"run", "--repo", t.TempDir()}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %s", tc.args, code, stderr)
		}
	}
}
