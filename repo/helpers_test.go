package repo

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fluxcd/pkg/gittestserver"
)

func TestMain(m *testing.M) {
	// gitkit, behind gittestserver, logs every request with the standard
	// logger; keep test output readable.
	log.SetOutput(io.Discard)
	if _, err := exec.LookPath("git"); err != nil {
		log.SetOutput(os.Stderr)
		log.Fatal("the git CLI is required by these tests: ", err)
	}
	os.Exit(m.Run())
}

// gitEnv isolates git from the user's configuration.
func gitEnv(home string) []string {
	return append(os.Environ(),
		"HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.com",
		"GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.com",
	)
}

// runGit runs the git CLI in dir and returns its trimmed output.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitOutput(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gitOutput runs the git CLI; usable outside the test goroutine.
func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// upstream is a bare repository (what a Git host stores) plus a working
// clone to make commits in with the git CLI.
type upstream struct {
	t    testing.TB
	bare string // bare repository path
	work string // working clone
}

// newUpstream makes a bare repository at root/name with one commit on main.
func newUpstream(t testing.TB, root, name string) *upstream {
	t.Helper()
	u := &upstream{t: t, bare: filepath.Join(root, name), work: t.TempDir()}
	runGit(t, root, "init", "-q", "--bare", "-b", "main", u.bare)
	runGit(t, u.work, "init", "-q", "-b", "main")
	runGit(t, u.work, "remote", "add", "origin", u.bare)
	u.write("README.md", "fleet\n")
	u.commit("initial")
	return u
}

func (u *upstream) write(name, content string) {
	u.t.Helper()
	p := filepath.Join(u.work, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		u.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		u.t.Fatal(err)
	}
}

func (u *upstream) symlink(target, name string) {
	u.t.Helper()
	p := filepath.Join(u.work, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		u.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		u.t.Fatal(err)
	}
}

// commit commits everything and pushes main; it returns the new SHA.
func (u *upstream) commit(msg string) string {
	u.t.Helper()
	runGit(u.t, u.work, "add", "-A")
	runGit(u.t, u.work, "commit", "-q", "--allow-empty", "-m", msg)
	runGit(u.t, u.work, "push", "-q", "-f", "origin", "HEAD:main")
	return runGit(u.t, u.work, "rev-parse", "HEAD")
}

// head is the upstream revision of a branch.
func (u *upstream) head(branch string) string {
	u.t.Helper()
	return runGit(u.t, u.bare, "rev-parse", "refs/heads/"+branch)
}

// httpServer is a gittestserver serving root over HTTP; it counts
// upload-pack POSTs (the requests that transfer objects).
type httpServer struct {
	*gittestserver.GitServer
	fetches atomic.Int64
	lists   atomic.Int64
}

func newHTTPServer(t testing.TB, root string, auth func(*gittestserver.GitServer), mw ...gittestserver.HTTPMiddleware) *httpServer {
	t.Helper()
	s := &httpServer{GitServer: gittestserver.NewGitServer(root)}
	if auth != nil {
		auth(s.GitServer)
	}
	s.AddHTTPMiddlewares(s.count)
	s.AddHTTPMiddlewares(mw...)
	if err := s.StartHTTP(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.StopHTTP)
	return s
}

func (s *httpServer) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
			s.fetches.Add(1)
		case strings.HasSuffix(r.URL.Path, "/info/refs"):
			s.lists.Add(1)
		}
		next.ServeHTTP(w, r)
	})
}

// pushAs commits a file on branch from a separate clone in dir, as
// another person or replica would; it returns the new SHA. It does not
// call t.Fatal, so a server middleware may use it.
func (u *upstream) pushAs(dir, branch, name, content string) (string, error) {
	steps := [][]string{
		{"clone", "-q", "-b", branch, u.bare, "."},
		{"add", "-A"}, {"commit", "-q", "-m", "other: " + name},
		{"push", "-q", "origin", "HEAD:" + branch}, {"rev-parse", "HEAD"},
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var out string
	for i, args := range steps {
		if i == 1 {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return "", err
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				return "", err
			}
		}
		var err error
		if out, err = gitOutput(dir, args...); err != nil {
			return "", err
		}
	}
	return out, nil
}

// isAncestor tells whether a is an ancestor of b in the bare repository.
func (u *upstream) isAncestor(a, b string) bool {
	cmd := exec.Command("git", "merge-base", "--is-ancestor", a, b)
	cmd.Dir = u.bare
	cmd.Env = gitEnv(u.bare)
	return cmd.Run() == nil
}

// show returns a file of the bare repository at a revision.
func (u *upstream) show(rev, name string) string {
	u.t.Helper()
	return runGit(u.t, u.bare, "show", rev+":"+name)
}
