package repo

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// statusFiles are n status records at round i, about 0.6 KiB each as a
// cluster's with two profiles: every one changes.
func statusFiles(n, i int) map[string]string {
	files := map[string]string{}
	for c := range n {
		files[fmt.Sprintf("status/clusters/c%04d.yaml", c)] = fmt.Sprintf(statusRecord, c, i, i, i)
	}
	return files
}

const statusRecord = `apiVersion: regatta.dev/v1alpha1
kind: ClusterStatus
cluster: c%04d
sourceRevision: %040d
reachable: true
kubernetesVersion: v1.37.2
labels:
  env: prod
  region: eu-west-1
profiles:
  - name: fa
    state: Applied
    revision: %040d
    renderHash: 69daaf42f9dba19ba28419c28e45791edc2f56bfa9f1ea45ca40e8e5ac3cbed8
    objects: 5
    health: 5 healthy
  - name: fb
    state: Applied
    revision: %040d
    renderHash: 0b1f2d7c5e8a4b3c9d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4
    objects: 5
    health: 5 healthy
`

// TestCloneStaysBounded commits 40 status commits of 300 changed records
// (about 12,000 objects) to a clone in memory, and to one on disk, while
// the followed branch moves: the store stays bounded, and nothing that is
// in use or on the remote is lost. A tree held from the start reads the
// same throughout (from another goroutine too); an older revision nobody
// held is fetched again by EnsureCommit; history walks fetch what they
// need; every status commit is on the remote, each on top of the one
// before. A clone on disk is read again after a restart.
func TestCloneStaysBounded(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testCloneStaysBounded(t, "") })
	t.Run("disk", func(t *testing.T) { testCloneStaysBounded(t, t.TempDir()) })
}

func testCloneStaysBounded(t *testing.T, dir string) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	up.write("profiles/p.yaml", "held\n")
	held := up.commit("held")
	srv := newHTTPServer(t, root, basicAuth("bot", "push-token-1"))
	ctx := context.Background()
	opts := Options{Dir: dir, URL: srv.HTTPAddress() + "/fleet.git", Auth: Auth{Username: "bot", Password: "push-token-1"}}
	src, err := NewSource(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	tree, err := src.Tree(ctx, held) // the revision in force, say
	if err != nil {
		t.Fatal(err)
	}
	stop := readWhile(tree, "profiles/p.yaml", "held\n")

	var middle, first, last string
	for i := range 40 {
		if i == 20 {
			up.write("profiles/p.yaml", "middle\n")
			middle = up.commit("middle")
			if _, _, err := src.Sync(ctx); err != nil {
				t.Fatal(err)
			}
		}
		res, err := src.CommitAndPush(ctx, statusRequest(statusFiles(300, i), held))
		if err != nil || !res.Committed {
			t.Fatalf("status commit %d: %+v %v", i, res, err)
		}
		if first == "" {
			first = res.SHA
		}
		last = res.SHA
		runtime.GC() // trees nobody holds are forgotten
	}
	up.write("profiles/p.yaml", "newest\n")
	newest := up.commit("newest")
	if _, _, err := src.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("the held tree failed to read while the store was compacted: %v", err)
	}

	n, packs := storedObjects(t, src)
	t.Logf("objects held: %d, packs %d (the last compaction kept %d); about 12,000 were written", n, packs, src.live.kept)
	if src.live.kept == 0 {
		t.Fatal("no compaction ran")
	}
	if n > minCompactObjects+400 || packs > maxPacks {
		t.Errorf("the clone holds %d objects (loose, on disk) and %d packs, more than %d and %d", n, packs, minCompactObjects+400, maxPacks)
	}
	wantFile(t, src, held, "profiles/p.yaml", "held\n")
	wantFile(t, src, newest, "profiles/p.yaml", "newest\n")
	if err := src.EnsureCommit(ctx, middle); err != nil {
		t.Fatalf("EnsureCommit of a revision nobody held: %v", err)
	}
	wantFile(t, src, middle, "profiles/p.yaml", "middle\n")
	if ok, err := src.Descends(ctx, newest, held); err != nil || !ok {
		t.Errorf("Descends(newest, held) = %v, %v; want true", ok, err)
	}
	if !up.isAncestor(first, last) {
		t.Error("the first status commit is not in the history of the last one on the remote")
	}
	for range 500 { // trees asked for and dropped are not remembered
		if _, err := src.Tree(ctx, newest); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	if _, err := src.Tree(ctx, newest); err != nil {
		t.Fatal(err)
	}
	if n := len(src.live.trees[plumbing.NewHash(newest)]); n > 2 {
		t.Errorf("%d trees of one revision remembered after 501 were asked for and dropped", n)
	}
	if got := runGit(t, up.bare, "rev-list", "--count", last); got != "40" {
		t.Errorf("the status branch has %s commits on the remote, want 40", got)
	}
	if want := strings.TrimSpace(statusFiles(300, 39)["status/clusters/c0299.yaml"]); up.show(last, "status/clusters/c0299.yaml") != want {
		t.Errorf("last status record on the remote: %q, want %q", up.show(last, "status/clusters/c0299.yaml"), want)
	}
	if dir != "" {
		again, err := NewSource(opts) // a restart over the compacted clone
		if err != nil {
			t.Fatal(err)
		}
		if again.Revision() != newest {
			t.Errorf("after a restart the clone on disk is at %q, want %s", again.Revision(), newest)
		}
		wantFile(t, again, newest, "profiles/p.yaml", "newest\n")
		wantFile(t, again, last, "status/clusters/c0299.yaml", statusFiles(300, 39)["status/clusters/c0299.yaml"])
	}
}

// storedObjects counts what src's store holds: its objects in memory, or
// its loose objects and packs on disk.
func storedObjects(t *testing.T, src *Source) (objects, packs int) {
	t.Helper()
	if src.mem != nil {
		return len(src.mem.Objects), 0
	}
	defer src.locked.wlock()()
	loose, ps, err := src.diskObjects()
	if err != nil {
		t.Fatal(err)
	}
	return len(loose), len(ps)
}

// readWhile reads name from tree in a loop until stop, which returns the
// first read that failed or differed from want.
func readWhile(tree *Tree, name, want string) (stop func() error) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var first error
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			b, err := tree.ReadFile(name)
			if err == nil && string(b) != want {
				err = fmt.Errorf("read %q, want %q", b, want)
			}
			if err != nil && first == nil {
				first = err
			}
			runtime.Gosched()
		}
	})
	return func() error { close(done); wg.Wait(); return first }
}

func wantFile(t *testing.T, src *Source, rev, name, want string) {
	t.Helper()
	tree, err := src.Tree(context.Background(), rev)
	if err != nil {
		t.Fatalf("tree of %s: %v", rev, err)
	}
	b, err := tree.ReadFile(name)
	if err != nil || string(b) != want {
		t.Errorf("%s at %s: %q, %v; want %q", name, rev, b, err, want)
	}
}

// httpSource is a Source over HTTP (in memory) of a new upstream at root,
// synced: its revision is returned.
func httpSource(tb testing.TB, root string) (*Source, *upstream, string) {
	tb.Helper()
	return httpSourceAt(tb, root, "")
}

// httpSourceAt is httpSource with its clone in dir ("": in memory).
func httpSourceAt(tb testing.TB, root, dir string) (*Source, *upstream, string) {
	tb.Helper()
	up := newUpstream(tb, root, "fleet.git")
	srv := newHTTPServer(tb, root, basicAuth("bot", "push-token-1"))
	src, err := NewSource(Options{Dir: dir, URL: srv.HTTPAddress() + "/fleet.git", Auth: Auth{Username: "bot", Password: "push-token-1"}})
	if err != nil {
		tb.Fatal(err)
	}
	rev, _, err := src.Sync(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return src, up, rev
}

// TestDiskCloneFilledEarlierIsCompacted: a cache directory that holds
// thousands of loose objects (an earlier release wrote one per status
// record and never removed them) is compacted at the first fetch after a
// restart; the followed revision and the status branch still read.
func TestDiskCloneFilledEarlierIsCompacted(t *testing.T) {
	dir := t.TempDir()
	src, _, rev := httpSourceAt(t, t.TempDir(), dir)
	ctx := context.Background()
	res, err := src.CommitAndPush(ctx, statusRequest(statusFiles(10, 0), rev))
	if err != nil || !res.Committed {
		t.Fatalf("status commit: %+v %v", res, err)
	}
	unlock := src.locked.wlock()
	for i := range minCompactObjects + 100 { // records of old status commits
		if _, err := writeBlob(src.disk, []byte(fmt.Sprintf("an old record %d\n", i))); err != nil {
			t.Fatal(err)
		}
	}
	unlock()
	if n, _ := storedObjects(t, src); n < minCompactObjects+100 {
		t.Fatalf("%d loose objects written, want %d", n, minCompactObjects+100)
	}

	again, err := NewSource(src.opts) // the restart
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := again.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	n, packs := storedObjects(t, again)
	t.Logf("after the first fetch: %d loose objects, %d packs", n, packs)
	if n != 0 || packs != 1 {
		t.Errorf("after the first fetch the clone holds %d loose objects and %d packs, want 0 and 1", n, packs)
	}
	wantFile(t, again, rev, "README.md", "fleet\n")
	wantFile(t, again, res.SHA, "status/clusters/c0009.yaml", statusFiles(10, 0)["status/clusters/c0009.yaml"])
}
