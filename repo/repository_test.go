package repo

import (
	"context"
	"errors"
	"io/fs"
	"testing"
)

func TestOpenResolve(t *testing.T) {
	up := newUpstream(t, t.TempDir(), "fleet.git")
	first := up.head("main")
	runGit(t, up.work, "tag", "v1")
	runGit(t, up.work, "tag", "-a", "-m", "release", "v1-annotated")
	up.write("clusters/a.yaml", "a\n")
	second := up.commit("second")
	runGit(t, up.work, "branch", "feature", first)

	r, err := Open(up.work + "/clusters") // found from a subfolder, like git
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for rev, want := range map[string]string{
		second: second, second[:7]: second, "HEAD": second, "main": second,
		"refs/heads/main": second, "main~1": first, "feature": first,
		"v1": first, "v1-annotated": first, "origin/main": second,
	} {
		got, err := r.Resolve(ctx, rev)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", rev, got, err, want)
		}
	}
	for _, rev := range []string{"nope", "0123456789012345678901234567890123456789", ""} {
		if _, err := r.Resolve(ctx, rev); !errors.Is(err, ErrRevisionNotFound) {
			t.Errorf("Resolve(%q) = %v, want ErrRevisionNotFound", rev, err)
		}
	}
}

func TestOpenTwoRevisionsSideBySide(t *testing.T) {
	up := newUpstream(t, t.TempDir(), "fleet.git")
	up.write("profiles/p.yaml", "v: 1\n")
	base := up.commit("base")
	up.write("profiles/p.yaml", "v: 2\n")
	up.commit("head")
	// Uncommitted changes in the working tree are never read.
	up.write("profiles/p.yaml", "v: dirty\n")

	r, err := Open(up.work)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := r.Tree(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Tree(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	for tree, want := range map[*Tree]string{a: "v: 1\n", b: "v: 2\n"} {
		got, err := fs.ReadFile(tree, "profiles/p.yaml")
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", tree.Revision()[:7], got, err, want)
		}
	}
	c, err := r.Commit(ctx, "HEAD")
	if err != nil || c.Message != "head\n" || c.Author.Email != "dev@example.com" || len(c.Parents) != 1 || c.Parents[0] != base {
		t.Errorf("Commit(HEAD) = %+v, %v", c, err)
	}
	if c.ByRegatta(Signature{Email: "regatta@example.com"}) {
		t.Error("a developer's commit is taken for regatta's")
	}
}

func TestOpenNotARepository(t *testing.T) {
	_, err := Open(t.TempDir())
	if !errors.Is(err, ErrRepositoryNotFound) {
		t.Fatalf("want ErrRepositoryNotFound, got %v", err)
	}
}

func TestSourceResolve(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	srv := newHTTPServer(t, root, nil)
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := src.Resolve(ctx, "HEAD"); !errors.Is(err, ErrRevisionNotFound) {
		t.Fatalf("Resolve before Sync: %v", err)
	}
	rev, _, err := src.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"HEAD", "main", rev, rev[:8]} {
		if got, err := src.Resolve(ctx, in); err != nil || got != up.head("main") {
			t.Errorf("Resolve(%q) = %s, %v", in, got, err)
		}
	}
}
