package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/fluxcd/pkg/gittestserver"
)

// Credentials of the loopback Git server.
const (
	GitUser     = "fleet"
	GitPassword = "s3cret"
)

// GitRepo is a fleet repository on a Git server on loopback (HTTP, basic
// auth), with a working clone to commit in.
type GitRepo struct {
	srv  *gittestserver.GitServer
	url  string
	work string
	// down makes the server answer 503 to every request (SetDown).
	down atomic.Bool
}

// StartGitRepo starts a server under root with an empty repository.
func StartGitRepo(ctx context.Context, root string) (*GitRepo, error) {
	if err := os.MkdirAll(filepath.Join(root, "srv"), 0o755); err != nil {
		return nil, err
	}
	srv := gittestserver.NewGitServer(filepath.Join(root, "srv"))
	srv.Auth(GitUser, GitPassword)
	g := &GitRepo{srv: srv, work: filepath.Join(root, "work")}
	srv.AddHTTPMiddlewares(g.outage)
	if err := srv.StartHTTP(); err != nil {
		return nil, fmt.Errorf("git server: %w", err)
	}
	g.url = srv.HTTPAddress() + "/fleet.git"
	bare := filepath.Join(root, "srv", "fleet.git")
	for _, args := range [][]string{
		{"init", "-q", "--bare", "-b", "main", bare},
		{"init", "-q", "-b", "main", g.work},
		{"-C", g.work, "remote", "add", "origin", bare},
	} {
		if _, err := runGit(ctx, root, args...); err != nil {
			srv.StopHTTP()
			return nil, err
		}
	}
	return g, nil
}

// URL is the repository's clone URL (credentials: GitUser, GitPassword).
func (g *GitRepo) URL() string { return g.url }

// WorkDir is the working clone.
func (g *GitRepo) WorkDir() string { return g.work }

// SetDown takes the server down (every request answered 503 Service
// Unavailable, as a Git host in an outage) or brings it back. The working
// clone pushes to the repository's folder, so commits go on meanwhile.
func (g *GitRepo) SetDown(down bool) { g.down.Store(down) }

// outage is the server's middleware that answers 503 while it is down.
func (g *GitRepo) outage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.down.Load() {
			http.Error(w, "git host down (bench outage)", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Close stops the server.
func (g *GitRepo) Close() { g.srv.StopHTTP() }

// Commit writes files (empty content deletes), commits, pushes main and
// returns the new revision.
func (g *GitRepo) Commit(ctx context.Context, msg string, files map[string]string) (string, error) {
	if err := WriteTree(g.work, files); err != nil {
		return "", err
	}
	for _, args := range [][]string{
		{"add", "-A"},
		{"commit", "-q", "--allow-empty", "-m", msg},
		{"push", "-q", "origin", "HEAD:main"},
	} {
		if _, err := runGit(ctx, g.work, args...); err != nil {
			return "", err
		}
	}
	return runGit(ctx, g.work, "rev-parse", "HEAD")
}

// WriteTree writes files under dir; empty content removes a file.
func WriteTree(dir string, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if content == "" {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func runGit(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=Bench", "GIT_COMMITTER_EMAIL=bench@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}
