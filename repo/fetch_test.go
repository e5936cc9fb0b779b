package repo

import (
	"context"
	"errors"
	"io/fs"
	"strings"
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
