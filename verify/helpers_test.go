package verify_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv/signing"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/verify"
)

// gitRepo is a real repository with a working tree, committed in with
// the git command.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	dir := t.TempDir()
	signing.Git(t, dir, signing.Unsigned, "init", "-q", "-b", "main")
	return &gitRepo{t: t, dir: dir}
}

func (g *gitRepo) commit(s signing.Signer, msg string, files map[string]string) string {
	g.t.Helper()
	return signing.Commit(g.t, g.dir, s, msg, files)
}

func (g *gitRepo) git(s signing.Signer, args ...string) string {
	g.t.Helper()
	return signing.Git(g.t, g.dir, s, args...)
}

// open reads the repository as the daemon does, with go-git.
func (g *gitRepo) open() *repo.Repository {
	g.t.Helper()
	r, err := repo.Open(g.dir)
	if err != nil {
		g.t.Fatal(err)
	}
	return r
}

// keysDir writes a trusted keys folder: name -> content.
func keysDir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func loadKeys(t *testing.T, files map[string][]byte) *verify.Keys {
	t.Helper()
	k, err := verify.LoadKeys(keysDir(t, files))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// check verifies rev against base in a repository.
func check(t *testing.T, g *gitRepo, opts verify.Options, rev, base string) verify.Verdict {
	t.Helper()
	return verify.New(g.open(), opts).Check(context.Background(), rev, base)
}

func wantAccepted(t *testing.T, v verify.Verdict) {
	t.Helper()
	if !v.Accepted {
		t.Fatalf("refused, want accepted: %s", v.Error())
	}
}

func wantRefused(t *testing.T, v verify.Verdict, commit string, reason verify.Reason) {
	t.Helper()
	if v.Accepted {
		t.Fatalf("accepted, want refused at %s with %s", commit, reason)
	}
	if v.Reason != reason || v.Commit != commit {
		t.Fatalf("refused at %s with %s (%s), want at %s with %s", v.Commit, v.Reason, v.Error(), commit, reason)
	}
}

func in(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}
