// Package gitfleet gives tests a fleet repository on a real Git server on
// loopback (HTTP with basic auth), and a working clone to commit in with
// the git command.
package gitfleet

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/gittestserver"
)

// User and Password are the Git server's basic auth credentials.
const (
	User     = "fleet"
	Password = "s3cret"
)

// Repo is a fleet repository: URL serves Bare, branch main; Work is a
// clone to commit in.
type Repo struct {
	t    testing.TB
	URL  string
	Bare string
	Work string
}

// New starts a Git server for the test and creates an empty repository.
func New(t testing.TB) *Repo {
	t.Helper()
	root := t.TempDir()
	srv := gittestserver.NewGitServer(root)
	srv.Auth(User, Password)
	if err := srv.StartHTTP(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.StopHTTP)
	r := &Repo{t: t, URL: srv.HTTPAddress() + "/fleet.git", Bare: filepath.Join(root, "fleet.git"), Work: t.TempDir()}
	Git(t, root, "init", "-q", "--bare", "-b", "main", r.Bare)
	Git(t, r.Work, "init", "-q", "-b", "main")
	Git(t, r.Work, "remote", "add", "origin", r.Bare)
	return r
}

// Write writes files into the working clone; empty content deletes.
func (r *Repo) Write(files map[string]string) {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.Work, name)
		if content == "" {
			os.RemoveAll(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// Commit writes files (empty content deletes), commits, pushes main and
// returns the commit.
func (r *Repo) Commit(msg string, files map[string]string) string {
	r.t.Helper()
	r.Write(files)
	Git(r.t, r.Work, "add", "-A")
	Git(r.t, r.Work, "commit", "-q", "--allow-empty", "-m", msg)
	Git(r.t, r.Work, "push", "-q", "origin", "HEAD:main")
	return Git(r.t, r.Work, "rev-parse", "HEAD")
}

// Show returns a file of the repository at a revision (a commit or a
// branch); the test fails when there is none.
func (r *Repo) Show(rev, name string) string {
	r.t.Helper()
	return Git(r.t, r.Bare, "show", rev+":"+name)
}

// Lookup returns a file of the repository at a revision, or "" when the
// revision or the file does not exist (yet).
func (r *Repo) Lookup(rev, name string) string {
	cmd := exec.Command("git", "show", rev+":"+name)
	cmd.Dir, cmd.Env = r.Bare, Env(r.Bare)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// Commits counts the commits of a branch.
func (r *Repo) Commits(branch string) int {
	r.t.Helper()
	var n int
	fmt.Sscan(Git(r.t, r.Bare, "rev-list", "--count", branch), &n)
	return n
}

// Env is the environment of a git command run in home: no user or system
// configuration, a fixed author and committer.
func Env(home string) []string {
	return append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.com",
		"GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.com")
}

// Git runs git in dir and returns its trimmed output; the test fails on
// an error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, Env(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// At is the repository of a local folder that is its own URL, bare
// repository and working clone (a non-bare repository, as `make demo`
// uses).
func At(t testing.TB, dir string) *Repo {
	return &Repo{t: t, URL: dir, Bare: dir, Work: dir}
}
