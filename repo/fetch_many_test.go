package repo

import (
	"context"
	"testing"
)

// TestFetchBranchesListsOnce: the status refs of many agents cost one
// listing per read, and a fetch only for a branch whose tip moved.
func TestFetchBranchesListsOnce(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	for _, b := range []string{"regatta-status/a", "regatta-status/b"} {
		runGit(t, up.work, "checkout", "-q", "--orphan", b)
		up.write("status/clusters/x.yaml", b)
		runGit(t, up.work, "add", "-A")
		runGit(t, up.work, "commit", "-q", "-m", b)
		runGit(t, up.work, "push", "-q", "origin", "HEAD:"+b)
	}
	srv := newHTTPServer(t, root, nil)
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want := []string{"regatta-status/a", "regatta-status/b", "regatta-status/missing"}
	got, err := src.FetchBranches(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["regatta-status/a"] != up.head("regatta-status/a") || got["regatta-status/b"] != up.head("regatta-status/b") {
		t.Fatalf("FetchBranches = %v", got)
	}
	// A fetch advertises the refs too: one listing of its own, plus one each.
	if l, f := srv.lists.Load(), srv.fetches.Load(); l != 3 || f != 2 {
		t.Errorf("first read: %d listings and %d fetches, want 1+2 and 2", l, f)
	}
	tree, err := src.Tree(ctx, got["regatta-status/b"])
	if err != nil {
		t.Fatal(err)
	}
	if b, err := tree.ReadFile("status/clusters/x.yaml"); err != nil || string(b) != "regatta-status/b" {
		t.Errorf("branch b's file = %q, %v", b, err)
	}
	if _, err := src.FetchBranches(ctx, want); err != nil {
		t.Fatal(err)
	}
	if l, f := srv.lists.Load(), srv.fetches.Load(); l != 4 || f != 2 {
		t.Errorf("unchanged read: %d listings and %d fetches in all, want one more listing and no fetch", l, f)
	}
}
