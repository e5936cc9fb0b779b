package repo

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
)

// statusHistory pushes n status commits of a few records from src.
func statusHistory(t *testing.T, src *Source, rev string, n int) {
	t.Helper()
	for i := range n {
		res, err := src.CommitAndPush(context.Background(), statusRequest(statusFiles(3, i), rev))
		if err != nil || !res.Committed {
			t.Fatalf("status commit %d: %+v %v", i, res, err)
		}
	}
}

func commitCount(t *testing.T, up *upstream, branch string) int {
	t.Helper()
	n, err := strconv.Atoi(runGit(t, up.bare, "rev-list", "--count", branch))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFoldHistory: a status branch of 10 commits folded to 4 holds 4
// commits on the Git server, the same tree at its tip, the same messages,
// and a root commit that names the commit it replaced and holds its tree;
// status commits go on on top of the folded branch, from the folding
// clone and from a clone that read the branch before the fold. The
// folding clone is in memory, then on disk (--cache-dir).
// The server offers filters (commits only are fetched) or does not (the
// kept history is fetched whole).
func TestFoldHistory(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testFoldHistory(t, "", true) })
	t.Run("memory-no-filter", func(t *testing.T) { testFoldHistory(t, "", false) })
	t.Run("disk", func(t *testing.T) { testFoldHistory(t, t.TempDir(), true) })
	t.Run("disk-no-filter", func(t *testing.T) { testFoldHistory(t, t.TempDir(), false) })
}

// allowFilter lets the Git server filter fetches, as Git hosts do.
func allowFilter(t testing.TB, up *upstream, on bool) {
	t.Helper()
	runGit(t, up.bare, "config", "uploadpack.allowFilter", strconv.FormatBool(on))
}

func testFoldHistory(t *testing.T, dir string, filter bool) {
	src, up, rev := httpSourceAt(t, t.TempDir(), dir)
	allowFilter(t, up, filter)
	other, err := NewSource(Options{URL: src.opts.URL, Auth: src.opts.Auth})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	statusHistory(t, src, rev, 10)
	if _, _, err := other.FetchBranch(ctx, DefaultStatusBranch); err != nil {
		t.Fatal(err)
	}
	before := up.head(DefaultStatusBranch)
	treeBefore := runGit(t, up.bare, "rev-parse", before+"^{tree}")
	oldest := runGit(t, up.bare, "rev-parse", before+"~3")
	res, err := src.FoldHistory(ctx, DefaultStatusBranch, 4)
	if err != nil || !res.Folded || res.Raced || res.Old != before || res.Kept != 4 {
		t.Fatalf("fold: %+v %v", res, err)
	}
	after := up.head(DefaultStatusBranch)
	if after != res.New || after == before {
		t.Fatalf("the branch is at %s, the fold says %s (was %s)", after, res.New, before)
	}
	if n := commitCount(t, up, DefaultStatusBranch); n != 4 {
		t.Fatalf("the folded branch holds %d commits, want 4", n)
	}
	if got := runGit(t, up.bare, "rev-parse", after+"^{tree}"); got != treeBefore {
		t.Fatalf("the tip's tree changed: %s, was %s", got, treeBefore)
	}
	root := runGit(t, up.bare, "rev-list", "--max-parents=0", after)
	if got, want := runGit(t, up.bare, "rev-parse", root+"^{tree}"), runGit(t, up.bare, "rev-parse", oldest+"^{tree}"); got != want {
		t.Fatalf("the root's tree is %s, want the oldest kept commit's %s", got, want)
	}
	if msg := runGit(t, up.bare, "log", "-1", "--format=%B", root); !strings.Contains(msg, TrailerFoldedFrom+": "+oldest) {
		t.Fatalf("the root's message does not name %s:\n%s", oldest, msg)
	}
	if a, b := runGit(t, up.bare, "log", "-3", "--format=%s%n%an%n%at", after), runGit(t, up.bare, "log", "-3", "--format=%s%n%an%n%at", before); a != b {
		t.Fatalf("the kept commits changed their message, author or date:\n%s\nwas\n%s", a, b)
	}
	for i, s := range []*Source{src, other} {
		res, err := s.CommitAndPush(ctx, statusRequest(statusFiles(3, 100+i), rev))
		if err != nil || !res.Committed {
			t.Fatalf("status commit after the fold from clone %d: %+v %v", i, res, err)
		}
	}
	if n := commitCount(t, up, DefaultStatusBranch); n != 6 || !up.isAncestor(after, up.head(DefaultStatusBranch)) {
		t.Fatalf("after two more status commits the branch holds %d commits (want 6) on top of the fold", n)
	}
	again, err := src.FoldHistory(ctx, DefaultStatusBranch, 6)
	if err != nil || again.Folded || again.Kept != 6 {
		t.Fatalf("a branch of 6 commits folded to keep 6: %+v %v", again, err)
	}
}

// TestFoldHistoryRaced: a fold built while another writer pushes a status
// commit is not pushed (the branch keeps that commit) and reports Raced;
// the next fold succeeds and keeps it.
func TestFoldHistoryRaced(t *testing.T) {
	src, up, rev := httpSource(t, t.TempDir())
	ctx := context.Background()
	statusHistory(t, src, rev, 6)
	allowFilter(t, up, true)
	tip, head, pack := foldHead(t, src, 3)
	theirs, err := up.pushAs(filepath.Join(t.TempDir(), "other"), DefaultStatusBranch, "status/clusters/other.yaml", "cluster: other\n")
	if err != nil {
		t.Fatal(err)
	}
	res, err := src.pushFold(ctx, DefaultStatusBranch, tip, head, pack, FoldResult{Old: tip.String()})
	if err != nil || !res.Raced || res.Folded {
		t.Fatalf("a fold over a moved branch: %+v %v", res, err)
	}
	if got := up.head(DefaultStatusBranch); got != theirs {
		t.Fatalf("the branch is at %s, want the other writer's %s", got, theirs)
	}
	res, err = src.FoldHistory(ctx, DefaultStatusBranch, 3)
	if err != nil || !res.Folded {
		t.Fatalf("the next fold: %+v %v", res, err)
	}
	if n := commitCount(t, up, DefaultStatusBranch); n != 3 {
		t.Fatalf("the folded branch holds %d commits, want 3", n)
	}
	if got := up.show(DefaultStatusBranch, "status/clusters/other.yaml"); got != "cluster: other" {
		t.Fatalf("the other writer's file reads %q after the fold", got)
	}
}

// foldHead builds a fold of the status branch to keep commits without
// pushing it, as FoldHistory does before its push.
func foldHead(t *testing.T, s *Source, keep int) (tip, head plumbing.Hash, pack func() (io.Reader, error)) {
	t.Helper()
	ctx := context.Background()
	s.mu.Lock()
	defer s.mu.Unlock()
	tip, _, err := s.remoteRef(ctx, DefaultStatusBranch)
	if err != nil {
		t.Fatal(err)
	}
	chain, more, err := s.keptCommits(ctx, DefaultStatusBranch, tip, keep)
	if err != nil || !more {
		t.Fatalf("chain: %d commits, more %v, %v", len(chain), more, err)
	}
	out := memory.NewStorage()
	head, written, err := rewriteChain(out, chain)
	if err != nil {
		t.Fatal(err)
	}
	return tip, head, func() (io.Reader, error) { return packOf(out, written) }
}

// TestFetchCommitsOnly: where the server filters, the fold's fetch holds
// the kept commits and no tree; where it does not, it says so.
func TestFetchCommitsOnly(t *testing.T) {
	src, up, rev := httpSource(t, t.TempDir())
	statusHistory(t, src, rev, 5)
	tip := plumbing.NewHash(up.head(DefaultStatusBranch))
	for _, on := range []bool{false, true} {
		allowFilter(t, up, on)
		st, ok, err := src.fetchCommitsOnly(context.Background(), tip, 3)
		if err != nil || ok != on {
			t.Fatalf("filter %v: ok %v, %v", on, ok, err)
		}
		if !on {
			continue
		}
		if n := len(st.Commits); n != 3 || len(st.Trees) != 0 || len(st.Blobs) != 0 {
			t.Fatalf("fetched %d commits, %d trees, %d blobs; want 3 commits only", n, len(st.Trees), len(st.Blobs))
		}
	}
}

// TestFoldHistoryRefusesFollowedBranch: the followed branch is the
// fleet's own history and is never folded.
func TestFoldHistoryRefusesFollowedBranch(t *testing.T) {
	src, up, _ := httpSource(t, t.TempDir())
	before := up.head("main")
	_, err := src.FoldHistory(context.Background(), "main", 1)
	if err == nil || !strings.Contains(err.Error(), "followed branch") {
		t.Fatalf("folding the followed branch: %v", err)
	}
	if up.head("main") != before {
		t.Fatal("main moved")
	}
}
