package repo

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// treeFixture commits a tree with symlinks in a local repository and
// returns it opened, with the clean and the escaping revision.
func treeFixture(t *testing.T) (r *Repository, clean, escaping string) {
	t.Helper()
	up := newUpstream(t, t.TempDir(), "fleet.git")
	up.write("apps/base/deploy.yaml", "kind: Deployment\n")
	up.write("apps/base/kustomization.yaml", "resources: [deploy.yaml]\n")
	up.write("bin/run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(up.work, "bin/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	up.symlink("base", "apps/current")                     // folder link
	up.symlink("../apps/base/deploy.yaml", "links/deploy") // file link
	up.symlink("current/deploy.yaml", "apps/chained")      // link through a link
	clean = up.commit("clean tree")
	up.symlink("../../outside", "apps/escape")
	up.symlink("/etc/passwd", "abs")
	up.symlink("loop2", "loop1")
	up.symlink("loop1", "loop2")
	escaping = up.commit("bad links")
	r, err := Open(up.work)
	if err != nil {
		t.Fatal(err)
	}
	return r, clean, escaping
}

func TestTreeIsAValidFS(t *testing.T) {
	r, clean, _ := treeFixture(t)
	tree, err := r.Tree(context.Background(), clean)
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(tree, "README.md", "apps/base/deploy.yaml", "apps/current", "bin/run.sh", "links/deploy"); err != nil {
		t.Fatal(err)
	}
}

func TestTreeSymlinks(t *testing.T) {
	r, _, rev := treeFixture(t)
	tree, err := r.Tree(context.Background(), rev)
	if err != nil {
		t.Fatal(err)
	}
	// Followed inside the tree.
	for _, name := range []string{"apps/current/deploy.yaml", "links/deploy", "apps/chained"} {
		b, err := tree.ReadFile(name)
		if err != nil || string(b) != "kind: Deployment\n" {
			t.Errorf("ReadFile(%s) = %q, %v", name, b, err)
		}
	}
	entries, err := tree.ReadDir("apps/current")
	if err != nil || len(entries) != 2 {
		t.Fatalf("ReadDir through a link: %v %v", entries, err)
	}
	// Reported, not followed, by Lstat and ReadLink, escaping or not.
	for name, target := range map[string]string{
		"apps/current": "base", "apps/escape": "../../outside", "abs": "/etc/passwd", "loop1": "loop2",
	} {
		info, err := tree.Lstat(name)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 || info.Name() != filepath.Base(name) {
			t.Errorf("Lstat(%s) = %v, %v; want a symlink", name, info, err)
		}
		if got, err := tree.ReadLink(name); err != nil || got != target {
			t.Errorf("ReadLink(%s) = %q, %v; want %q", name, got, err, target)
		}
	}
	// Escapes and loops fail when followed.
	for _, name := range []string{"apps/escape", "abs"} {
		if _, err := tree.Open(name); !errors.Is(err, ErrSymlinkEscape) {
			t.Errorf("Open(%s) = %v, want ErrSymlinkEscape", name, err)
		}
	}
	if _, err := tree.Stat("loop1"); err == nil || !strings.Contains(err.Error(), "too many levels") {
		t.Errorf("Stat(loop1) = %v, want a loop error", err)
	}
	if _, err := tree.ReadLink("README.md"); err == nil {
		t.Error("ReadLink of a regular file succeeded")
	}
	// Stat follows; Lstat on a non-link equals Stat.
	if info, err := tree.Stat("apps/current"); err != nil || !info.IsDir() {
		t.Errorf("Stat(apps/current) = %v, %v", info, err)
	}
	if info, err := tree.Stat("bin/run.sh"); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("executable mode lost: %v %v", info, err)
	}
}

func TestTreeErrors(t *testing.T) {
	r, clean, _ := treeFixture(t)
	tree, err := r.Tree(context.Background(), clean)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"missing", "README.md/x", "apps/missing/x"} {
		if _, err := tree.Stat(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%s) = %v, want ErrNotExist", name, err)
		}
	}
	for _, name := range []string{"/abs", "../x", "a//b", "./x"} {
		if _, err := tree.Open(name); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Open(%q) = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := tree.ReadFile("apps"); err == nil {
		t.Error("ReadFile of a folder succeeded")
	}
	if _, err := tree.ReadDir("README.md"); err == nil {
		t.Error("ReadDir of a file succeeded")
	}
	f, err := tree.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, err := io.ReadAll(f); err != nil || string(b) != "fleet\n" {
		t.Errorf("read README.md: %q %v", b, err)
	}
}

func TestTreeHash(t *testing.T) {
	r, clean, escaping := treeFixture(t)
	ctx := context.Background()
	a, err := r.Tree(ctx, clean)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Tree(ctx, escaping)
	if err != nil {
		t.Fatal(err)
	}
	hash := func(tree *Tree, name string) string {
		h, err := tree.TreeHash(name)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	// apps/base is unchanged between the revisions, apps/ is not.
	if hash(a, "apps/base") != hash(b, "apps/base") {
		t.Error("unchanged folder has a new hash")
	}
	if hash(a, "apps") == hash(b, "apps") || hash(a, ".") == hash(b, ".") {
		t.Error("changed folder kept its hash")
	}
	if hash(a, ".") != a.Hash() {
		t.Error("TreeHash(.) differs from Hash()")
	}
	// Symlinks are followed: the link and its target hash alike.
	if hash(a, "apps/current") != hash(a, "apps/base") || hash(a, "links/deploy") != hash(a, "apps/base/deploy.yaml") {
		t.Error("TreeHash does not follow symlinks")
	}
	// Git agrees on the hashes.
	want := runGit(t, filepath.Dir(filepath.Dir(r.display)), "-C", r.display, "rev-parse", clean+":apps/base")
	if got := hash(a, "apps/base"); got != want {
		t.Errorf("TreeHash(apps/base) = %s, git says %s", got, want)
	}
}
