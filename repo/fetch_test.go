package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/fluxcd/pkg/gittestserver"
)

func basicAuth(user, pass string) func(*gittestserver.GitServer) {
	return func(s *gittestserver.GitServer) { s.Auth(user, pass) }
}

func TestSyncHTTPBasicAuth(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	srv := newHTTPServer(t, root, basicAuth("alice", "s3cret-pass"))
	ctx := context.Background()

	src, err := NewSource(Options{
		URL:  srv.HTTPAddress() + "/fleet.git",
		Auth: Auth{Username: "alice", Password: "s3cret-pass"},
	})
	if err != nil {
		t.Fatal(err)
	}
	rev, changed, err := src.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rev != up.head("main") || !changed {
		t.Fatalf("first sync: rev %s changed %v, want %s true", rev, changed, up.head("main"))
	}
	assertFile(t, src, rev, "README.md", "fleet\n")
	first := rev

	up.write("clusters/a.yaml", "name: a\n")
	second := up.commit("add a")
	rev, changed, err = src.Sync(ctx)
	if err != nil || rev != second || !changed {
		t.Fatalf("second sync: %s %v %v, want %s", rev, changed, err, second)
	}
	assertFile(t, src, second, "clusters/a.yaml", "name: a\n")
	// The first revision is still readable next to the second.
	old, err := src.Tree(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = old.Stat("clusters"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("old tree has clusters/: %v", err)
	}
	// Both fetches were shallow.
	if shallow, err := src.store.Shallow(); err != nil || len(shallow) == 0 {
		t.Fatalf("storage is not shallow: %v %v", shallow, err)
	}
}

func TestSyncNoChangeDoesNotFetch(t *testing.T) {
	root := t.TempDir()
	newUpstream(t, root, "fleet.git")
	srv := newHTTPServer(t, root, nil)
	ctx := context.Background()
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	fetches, lists := srv.fetches.Load(), srv.lists.Load()
	for range 3 {
		if _, changed, err := src.Sync(ctx); err != nil || changed {
			t.Fatalf("no-op sync: changed %v err %v", changed, err)
		}
	}
	if got := srv.fetches.Load(); got != fetches {
		t.Fatalf("no-op syncs made %d upload-pack requests, want 0", got-fetches)
	}
	if got := srv.lists.Load() - lists; got != 3 {
		t.Fatalf("no-op syncs listed refs %d times, want 3", got)
	}
}

func TestSyncWrongPassword(t *testing.T) {
	root := t.TempDir()
	newUpstream(t, root, "fleet.git")
	srv := newHTTPServer(t, root, basicAuth("alice", "right-password"))
	const bad = "wrong-password-42"
	for _, tc := range []struct {
		name string
		url  string
		auth Auth
	}{
		{"options", srv.HTTPAddress() + "/fleet.git", Auth{Username: "alice", Password: bad}},
		{"url", strings.Replace(srv.HTTPAddress(), "http://", "http://alice:"+bad+"@", 1) + "/fleet.git", Auth{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := NewSource(Options{URL: tc.url, Auth: tc.auth})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = src.Sync(context.Background())
			t.Log(err)
			if !errors.Is(err, ErrAuthentication) {
				t.Fatalf("want ErrAuthentication, got %v", err)
			}
			want := "authentication failed for " + srv.HTTPAddress() + "/fleet.git"
			if !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %q does not start with %q", err, want)
			}
			if strings.Contains(err.Error(), bad) || strings.Contains(src.URL(), bad) {
				t.Fatalf("password leaked: %q / %q", err, src.URL())
			}
		})
	}
}

func assertFile(t *testing.T, src interface {
	Tree(context.Context, string) (*Tree, error)
}, rev, name, want string) {
	t.Helper()
	tree, err := src.Tree(context.Background(), rev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fs.ReadFile(tree, name)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s@%s = %q, want %q", name, rev[:7], got, want)
	}
}

func TestSyncFollowsForcePush(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	up.write("clusters/a.yaml", "v1\n")
	before := up.commit("v1")
	srv := newHTTPServer(t, root, nil)
	ctx := context.Background()
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git"})
	if err != nil {
		t.Fatal(err)
	}
	if rev, _, err := src.Sync(ctx); err != nil || rev != before {
		t.Fatalf("sync: %s %v", rev, err)
	}
	// Rewrite history: drop the last commit, commit something else, force-push.
	runGit(t, up.work, "reset", "-q", "--hard", "HEAD~1")
	up.write("clusters/b.yaml", "rewritten\n")
	after := up.commit("rewritten")
	rev, changed, err := src.Sync(ctx)
	if err != nil || rev != after || !changed {
		t.Fatalf("sync after force-push: %s %v %v, want %s", rev, changed, err, after)
	}
	assertFile(t, src, after, "clusters/b.yaml", "rewritten\n")
	tree, err := src.Tree(ctx, after)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.Stat("clusters/a.yaml"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("rewritten tree still has clusters/a.yaml: %v", err)
	}
	// The abandoned revision stays readable (a pass in flight may use it).
	assertFile(t, src, before, "clusters/a.yaml", "v1\n")
}

func TestSyncLocal(t *testing.T) {
	up := newUpstream(t, t.TempDir(), "fleet.git")
	for name, url := range map[string]string{
		"file url":      "file://" + up.bare,
		"bare path":     up.bare,
		"working clone": up.work,
	} {
		t.Run(name, func(t *testing.T) {
			src, err := NewSource(Options{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			rev, _, err := src.Sync(context.Background())
			if err != nil || rev != up.head("main") {
				t.Fatalf("sync: %s %v", rev, err)
			}
			assertFile(t, src, rev, "README.md", "fleet\n")
		})
	}
}

func TestSyncBranchAndRepositoryNotFound(t *testing.T) {
	root := t.TempDir()
	newUpstream(t, root, "fleet.git")
	srv := newHTTPServer(t, root, nil)
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git", Branch: "nope"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = src.Sync(context.Background())
	t.Log(err)
	if !errors.Is(err, ErrBranchNotFound) {
		t.Fatalf("want ErrBranchNotFound, got %v", err)
	}
	src, err = NewSource(Options{URL: srv.HTTPAddress() + "/missing.git"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = src.Sync(context.Background())
	t.Log(err)
	if !errors.Is(err, ErrRepositoryNotFound) {
		t.Fatalf("want ErrRepositoryNotFound, got %v", err)
	}
}

// bearerOnly is a middleware that admits only "Authorization: Bearer token".
func bearerOnly(token string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// gitkit (inside gittestserver) only knows basic auth, so bearer tokens
// are checked by a middleware in front of the same real Git server.
func TestSyncBearerToken(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	const token = "bearer-token-xyz"
	srv := newHTTPServer(t, root, nil, bearerOnly(token))
	url := srv.HTTPAddress() + "/fleet.git"

	src, err := NewSource(Options{URL: url, Auth: Auth{BearerToken: token}})
	if err != nil {
		t.Fatal(err)
	}
	if rev, _, err := src.Sync(context.Background()); err != nil || rev != up.head("main") {
		t.Fatalf("sync with token: %s %v", rev, err)
	}
	if _, err := src.CommitAndPush(context.Background(), CommitRequest{Files: map[string][]byte{"s": []byte("x")}}); err != nil {
		t.Fatalf("push with token: %v", err)
	}

	bad, err := NewSource(Options{URL: url, Auth: Auth{BearerToken: "wrong-token-abc"}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = bad.Sync(context.Background())
	if !errors.Is(err, ErrAuthentication) || strings.Contains(err.Error(), "wrong-token-abc") {
		t.Fatalf("want a clean authentication error, got %v", err)
	}
}

func TestSyncDiskStorageSurvivesRestart(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	srv := newHTTPServer(t, root, nil)
	dir := t.TempDir()
	opts := Options{URL: srv.HTTPAddress() + "/fleet.git", Dir: dir}
	src, err := NewSource(opts)
	if err != nil {
		t.Fatal(err)
	}
	rev, _, err := src.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// A restart reuses the stored clone: no objects are fetched again.
	restarted, err := NewSource(opts)
	if err != nil {
		t.Fatal(err)
	}
	if restarted.Revision() != rev {
		t.Fatalf("restarted at %q, want %s", restarted.Revision(), rev)
	}
	fetches := srv.fetches.Load()
	if got, changed, err := restarted.Sync(context.Background()); err != nil || got != rev || changed {
		t.Fatalf("sync after restart: %s %v %v", got, changed, err)
	}
	if srv.fetches.Load() != fetches {
		t.Fatal("restart fetched objects again")
	}
	next := up.commit("next")
	if got, _, err := restarted.Sync(context.Background()); err != nil || got != next {
		t.Fatalf("sync: %s %v", got, err)
	}
	assertFile(t, restarted, next, "README.md", "fleet\n")
}

func TestSyncConcurrentReaders(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	for i := range 20 {
		up.write(fmt.Sprintf("apps/app%d/deploy.yaml", i), fmt.Sprintf("n: %d\n", i))
	}
	up.commit("apps")
	srv := newHTTPServer(t, root, nil)
	for _, dir := range []string{"", t.TempDir()} {
		src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git", Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		rev, _, err := src.Sync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tree, err := src.Tree(context.Background(), rev)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for i := range 20 {
					if _, err := fs.ReadFile(tree, fmt.Sprintf("apps/app%d/deploy.yaml", i)); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Go(func() {
			for i := range 3 {
				up.write("apps/app0/deploy.yaml", fmt.Sprint(i))
				up.commit("change")
				if _, _, err := src.Sync(context.Background()); err != nil {
					t.Error(err)
				}
			}
		})
		wg.Wait()
	}
}

func TestSyncFullHistory(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	first := up.head("main")
	second := up.commit("second")
	srv := newHTTPServer(t, root, nil)
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git", FullHistory: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if rev, _, err := src.Sync(ctx); err != nil || rev != second {
		t.Fatalf("sync: %s %v", rev, err)
	}
	if got, err := src.Resolve(ctx, "main~1"); err != nil || got != first {
		t.Fatalf("Resolve(main~1) = %s, %v; want %s", got, err, first)
	}
	if shallow, _ := src.store.Shallow(); len(shallow) != 0 {
		t.Fatalf("full history clone is shallow: %v", shallow)
	}
}
