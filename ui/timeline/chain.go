package timeline

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/ui"
)

// chain is the branch as one read saw it: its commits down the first
// parents, newest first, and the repository that holds them. It never
// changes once made; a move of the branch makes a new one.
type chain struct {
	head    string
	commits []repo.Commit
	index   map[string]int // SHA -> position in commits
	repo    *repo.Repository
}

// advance is the chain at head: the commits added on top of c, or the
// whole branch again when it was rewritten (a fold).
func (c *chain) advance(ctx context.Context, g *repo.Repository, head string) (*chain, error) {
	added, err := g.FirstParents(ctx, head, c.head, 0)
	if err != nil {
		return nil, err
	}
	commits := added
	if last := added[len(added)-1]; c.head != "" && len(last.Parents) > 0 && last.Parents[0] == c.head {
		commits = append(append(make([]repo.Commit, 0, len(added)+len(c.commits)), added...), c.commits...)
	}
	next := &chain{head: head, commits: commits, index: make(map[string]int, len(commits)), repo: g}
	for i, cm := range commits {
		next.index[cm.SHA] = i
	}
	return next, nil
}

// parent is the position of the first parent of the commit at i, or -1
// when the branch holds no parent of it (its first commit, or the oldest
// one a fold kept).
func (c *chain) parent(i int) int {
	if i+1 < len(c.commits) && len(c.commits[i].Parents) > 0 && c.commits[i].Parents[0] == c.commits[i+1].SHA {
		return i + 1
	}
	return -1
}

// find is the position of a commit given by its full or abbreviated hash.
func (c *chain) find(commit string) (int, error) {
	commit = strings.ToLower(commit)
	if i, ok := c.index[commit]; ok {
		return i, nil
	}
	if len(commit) < 4 || len(commit) > 40 || strings.Trim(commit, "0123456789abcdef") != "" {
		return 0, fmt.Errorf("%q: %w: not a commit hash", commit, ui.ErrUnknownCommit)
	}
	found := -1
	for i, cm := range c.commits {
		if !strings.HasPrefix(cm.SHA, commit) {
			continue
		}
		if found >= 0 {
			return 0, fmt.Errorf("%s: %w: ambiguous, it abbreviates %s and %s", commit, ui.ErrUnknownCommit,
				c.commits[found].SHA, cm.SHA)
		}
		found = i
	}
	if found < 0 {
		return 0, fmt.Errorf("%s: %w on the status branch", commit, ui.ErrUnknownCommit)
	}
	return found, nil
}

// remote is a repository fetched through a repo.Source.
type remote struct {
	branch string
	mu     sync.Mutex
	src    *repo.Source
	// fresh, when set, makes the Source again: one of the Reader's own in
	// memory, which would otherwise keep the objects of the history a
	// fold rewrote for the life of the process.
	fresh func() (*repo.Source, error)
}

func (g *remote) source() *repo.Source {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.src
}

func (g *remote) head(ctx context.Context) (string, *repo.Repository, bool, error) {
	src := g.source()
	sha, found, err := src.FetchBranch(ctx, g.branch)
	return sha, src.Repository, found, err
}

func (g *remote) renew() (bool, error) {
	if g.fresh == nil {
		return false, nil
	}
	src, err := g.fresh()
	if err != nil {
		return false, err
	}
	g.mu.Lock()
	g.src = src
	g.mu.Unlock()
	return true, nil
}

func (g *remote) where() string { return g.source().URL() }

// local is a repository on this machine. It is opened again when the
// branch moved: go-git lists a repository's packs once, and a fetch or
// gc may have written new ones.
type local struct {
	dir, branch string
	mu          sync.Mutex
	repo        *repo.Repository
	last        string
}

func (g *local) head(ctx context.Context) (string, *repo.Repository, bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	sha, found := g.resolve(ctx)
	if sha != g.last || !found {
		r, err := repo.Open(g.dir)
		if err != nil {
			return "", nil, false, err
		}
		g.repo = r
		sha, found = g.resolve(ctx)
	}
	g.last = sha
	return sha, g.repo, found, ctx.Err()
}

// resolve reads the local branch, else the remote-tracking one.
func (g *local) resolve(ctx context.Context) (string, bool) {
	for _, rev := range []string{"refs/heads/" + g.branch, "refs/remotes/origin/" + g.branch} {
		if sha, err := g.repo.Resolve(ctx, rev); err == nil {
			return sha, true
		}
	}
	return "", false
}

// renew keeps the repository: it is the user's.
func (g *local) renew() (bool, error) { return false, nil }

func (g *local) where() string { return g.dir }
