package repo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func statusRequest(files map[string]string, rev string) CommitRequest {
	req := CommitRequest{
		Branch:   DefaultStatusBranch,
		Prefix:   "status",
		Files:    map[string][]byte{},
		Prune:    true,
		Author:   Signature{Name: "regatta", Email: "regatta@example.com"},
		Message:  "Update fleet status",
		Trailers: []Trailer{{TrailerSourceRevision, rev}},
	}
	for k, v := range files {
		req.Files[k] = []byte(v)
	}
	return req
}

func TestCommitStatusBranch(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	srv := newHTTPServer(t, root, basicAuth("bot", "push-token-1"))
	ctx := context.Background()
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git", Auth: Auth{Username: "bot", Password: "push-token-1"}})
	if err != nil {
		t.Fatal(err)
	}
	rev, _, err := src.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The branch is missing: an orphan commit creates it.
	req := statusRequest(map[string]string{"status/README.md": "# fleet\n", "status/clusters/a.yaml": "a\n", "status/clusters/b.yaml": "b\n"}, rev)
	res, err := src.CommitAndPush(ctx, req)
	if err != nil || !res.Committed || res.Attempts != 1 {
		t.Fatalf("first commit: %+v %v", res, err)
	}
	if got := up.head(DefaultStatusBranch); got != res.SHA {
		t.Fatalf("remote status branch at %s, want %s", got, res.SHA)
	}
	c, err := src.Commit(ctx, res.SHA)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Parents) != 0 || c.Trailer(TrailerSourceRevision) != rev || !c.ByRegatta(Signature{}) {
		t.Fatalf("commit %+v: want an orphan with trailer %s", c, rev)
	}
	if up.show(res.SHA, "status/clusters/a.yaml") != "a" {
		t.Fatal("status/clusters/a.yaml not pushed")
	}

	// The same content again: no commit.
	again, err := src.CommitAndPush(ctx, req)
	if err != nil || again.Committed || again.SHA != res.SHA || again.Attempts != 0 {
		t.Fatalf("unchanged commit: %+v %v", again, err)
	}

	// Cluster b is gone: pruned; a changed.
	req = statusRequest(map[string]string{"status/README.md": "# fleet\n", "status/clusters/a.yaml": "a2\n"}, rev)
	next, err := src.CommitAndPush(ctx, req)
	if err != nil || !next.Committed {
		t.Fatalf("prune commit: %+v %v", next, err)
	}
	tree, err := src.Tree(ctx, next.SHA)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := tree.ReadDir("status/clusters")
	if err != nil || len(entries) != 1 || entries[0].Name() != "a.yaml" {
		t.Fatalf("status/clusters after prune: %v %v", entries, err)
	}
	if !up.isAncestor(res.SHA, next.SHA) {
		t.Fatal("second status commit is not on top of the first")
	}
}

func TestCommitPushRace(t *testing.T) {
	rc := newRacer(t, "status/clusters/other.yaml")
	up, src, ctx := rc.up, rc.src, context.Background()
	first, err := src.CommitAndPush(ctx, CommitRequest{Prefix: "status", Files: map[string][]byte{"status/README.md": []byte("v1\n")}})
	if err != nil || !first.Committed {
		t.Fatalf("create status branch: %+v %v", first, err)
	}

	rc.armed.Store(true)
	res, err := src.CommitAndPush(ctx, CommitRequest{Prefix: "status", Files: map[string][]byte{"status/README.md": []byte("v2\n")}})
	other := rc.other
	if rc.otherErr != nil || other == "" {
		t.Fatalf("the concurrent push did not happen: %v", rc.otherErr)
	}
	if err != nil || !res.Committed || res.Attempts != 2 {
		t.Fatalf("want a commit after 2 attempts, got %+v %v", res, err)
	}
	tip := up.head(DefaultStatusBranch)
	if tip != res.SHA || !up.isAncestor(other, tip) || !up.isAncestor(first.SHA, tip) {
		t.Fatalf("their commit %s is not kept under ours %s (tip %s): force push?", other, res.SHA, tip)
	}
	if up.show(tip, "status/clusters/other.yaml") != "theirs" || up.show(tip, "status/README.md") != "v2" {
		t.Fatal("final tree lacks one side of the race")
	}
}

func TestCommitPushRaceBounded(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	var n atomic.Int64
	always := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
				i := n.Add(1)
				if _, err := up.pushAs(filepath.Join(root, fmt.Sprint("o", i)), "main", fmt.Sprint("f", i), "x"); err != nil {
					t.Error(err)
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	srv := newHTTPServer(t, root, nil, always)
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := src.CommitAndPush(context.Background(), CommitRequest{Branch: "main", MaxAttempts: 3, Files: map[string][]byte{"status/x": []byte("x")}})
	t.Log(err)
	if !errors.Is(err, ErrPushRejected) || res.Committed || res.Attempts != 3 {
		t.Fatalf("want ErrPushRejected after 3 attempts, got %+v %v", res, err)
	}
}

func TestCommitOnFollowedBranch(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	up.write("clusters/a.yaml", "a\n")
	up.commit("fleet")
	srv := newHTTPServer(t, root, nil)
	ctx := context.Background()
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git"})
	if err != nil {
		t.Fatal(err)
	}
	rev, _, err := src.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := statusRequest(map[string]string{"status/README.md": "ok\n"}, rev)
	req.Branch = "main"
	res, err := src.CommitAndPush(ctx, req)
	if err != nil || !res.Committed {
		t.Fatalf("%+v %v", res, err)
	}
	if !up.isAncestor(rev, res.SHA) || up.show(res.SHA, "clusters/a.yaml") != "a" {
		t.Fatal("status commit is not on top of the followed branch")
	}
	// The next Sync sees regatta's own commit, with an equal tree outside
	// status/, so the daemon can skip the pass.
	got, changed, err := src.Sync(ctx)
	if err != nil || got != res.SHA || !changed {
		t.Fatalf("sync after own commit: %s %v %v", got, changed, err)
	}
	c, err := src.Commit(ctx, got)
	if err != nil || !c.ByRegatta(Signature{}) {
		t.Fatalf("own commit not recognised: %+v %v", c, err)
	}
	same, err := src.TreesEqualExcept(ctx, rev, got, "status")
	if err != nil || !same {
		t.Fatalf("TreesEqualExcept = %v %v, want true", same, err)
	}
}

func TestCommitRequestPaths(t *testing.T) {
	for _, p := range []string{"../x", "/abs", "other/file", "status/../x", ""} {
		req := CommitRequest{Prefix: "status", Files: map[string][]byte{p: nil}}
		if _, err := req.normalized(); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
}

func TestCommitToLocalRepository(t *testing.T) {
	up := newUpstream(t, t.TempDir(), "fleet.git")
	for name, url := range map[string]string{"working clone": up.work, "bare": "file://" + up.bare} {
		t.Run(name, func(t *testing.T) {
			src, err := NewSource(Options{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			rev, _, err := src.Sync(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			res, err := src.CommitAndPush(context.Background(), statusRequest(map[string]string{"status/README.md": "ok\n"}, rev))
			if err != nil || !res.Committed {
				t.Fatalf("%+v %v", res, err)
			}
			dir := strings.TrimPrefix(url, "file://")
			if got := runGit(t, dir, "rev-parse", "refs/heads/"+DefaultStatusBranch); got != res.SHA {
				t.Fatalf("status branch at %s, want %s", got, res.SHA)
			}
			if got := runGit(t, dir, "show", res.SHA+":status/README.md"); got != "ok" {
				t.Fatalf("status/README.md = %q", got)
			}
		})
	}
}

// TestCommitRewriteSeesRacingParent: Rewrite is asked at every attempt
// with the content of the commit it builds on, so a file pushed by
// someone else in between is seen and can be left alone, even by a
// pruning commit.
func TestCommitRewriteSeesRacingParent(t *testing.T) {
	rc := newRacer(t, "status/clusters/a.yaml")
	up, src, ctx := rc.up, rc.src, context.Background()
	if _, err := src.CommitAndPush(ctx, statusRequest(map[string]string{"status/clusters/a.yaml": "a1\n"}, "r")); err != nil {
		t.Fatal(err)
	}
	var seen []string
	req := statusRequest(map[string]string{"status/clusters/a.yaml": "a2\n", "status/README.md": "x\n"}, "r")
	req.Rewrite = func(p string, parent []byte, found bool, proposed []byte) ([]byte, bool) {
		if p != "status/clusters/a.yaml" {
			return proposed, true
		}
		seen = append(seen, fmt.Sprintf("%s:%v", parent, found))
		return proposed, string(parent) != "theirs\n" // leave theirs alone
	}
	rc.armed.Store(true)
	res, err := src.CommitAndPush(ctx, req)
	if rc.otherErr != nil || err != nil || !res.Committed || res.Attempts != 2 {
		t.Fatalf("%+v %v %v", res, err, rc.otherErr)
	}
	if strings.Join(seen, ",") != "a1\n:true,theirs\n:true" {
		t.Errorf("Rewrite saw %q", seen)
	}
	tip := up.head(DefaultStatusBranch)
	if up.show(tip, "status/clusters/a.yaml") != "theirs" || up.show(tip, "status/README.md") != "x" {
		t.Errorf("the racing file was not kept, or ours not written")
	}
}

// racer serves an upstream whose next push, once armed, is preceded by
// someone else's push of file ("theirs"): after we listed the branch and
// built our commit, just before our push arrives.
type racer struct {
	up       *upstream
	src      *Source
	armed    atomic.Bool
	other    string
	otherErr error
}

func newRacer(t *testing.T, file string) *racer {
	t.Helper()
	root := t.TempDir()
	rc := &racer{up: newUpstream(t, root, "fleet.git")}
	otherDir := t.TempDir()
	race := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") && rc.armed.CompareAndSwap(true, false) {
				rc.other, rc.otherErr = rc.up.pushAs(otherDir, DefaultStatusBranch, file, "theirs\n")
			}
			next.ServeHTTP(w, r)
		})
	}
	srv := newHTTPServer(t, root, nil, race)
	var err error
	if rc.src, err = NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git"}); err != nil {
		t.Fatal(err)
	}
	return rc
}
