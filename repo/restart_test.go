package repo

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// repoKind is one kind of repository URL the docs list, with how a
// developer commits to its followed branch and reads its status branch.
type repoKind struct {
	name   string
	opts   func(t *testing.T, root string, up *upstream) Options
	commit func(up *upstream, msg string) string
	refDir func(up *upstream) string // where the status branch lands
}

func repoKinds() []repoKind {
	viaBare := func(up *upstream, msg string) string { return up.commit(msg) }
	inWork := func(up *upstream, msg string) string {
		up.write("change.txt", msg)
		runGit(up.t, up.work, "add", "-A")
		runGit(up.t, up.work, "commit", "-q", "-m", msg)
		return runGit(up.t, up.work, "rev-parse", "HEAD")
	}
	bare := func(up *upstream) string { return up.bare }
	work := func(up *upstream) string { return up.work }
	local := func(url func(up *upstream) string) func(*testing.T, string, *upstream) Options {
		return func(_ *testing.T, _ string, up *upstream) Options { return Options{URL: url(up)} }
	}
	return []repoKind{
		{"bare file URL", local(func(up *upstream) string { return "file://" + up.bare }), viaBare, bare},
		{"bare path", local(bare), viaBare, bare},
		{"working repository path", local(work), inWork, work},
		{"working repository file URL", local(func(up *upstream) string { return "file://" + up.work }), inWork, work},
		{"linked worktree", linkedWorktree, inWork, work},
		{"HTTP", func(t *testing.T, root string, _ *upstream) Options {
			return Options{URL: newHTTPServer(t, root, nil).HTTPAddress() + "/fleet.git"}
		}, viaBare, bare},
		{"SSH", func(t *testing.T, root string, _ *upstream) Options {
			url, known := sshServer(t, root)
			return Options{URL: url, Auth: Auth{SSHPrivateKey: clientKey(t), KnownHosts: []byte(known + "\n")}}
		}, viaBare, bare},
	}
}

// linkedWorktree adds a worktree of up.work on branch main and makes
// commits there from then on.
func linkedWorktree(t *testing.T, _ string, up *upstream) Options {
	wt := filepath.Join(t.TempDir(), "wt")
	runGit(t, up.work, "checkout", "-q", "-b", "scratch")
	runGit(t, up.work, "worktree", "add", "-q", wt, "main")
	up.work = wt
	return Options{URL: wt}
}

// TestStatusPushSurvivesRestarts commits to the followed branch, restarts
// the Source (fresh memory storage, or the same --cache-dir) and pushes a
// status commit, several times, for every kind of repository URL.
func TestStatusPushSurvivesRestarts(t *testing.T) {
	for _, kind := range repoKinds() {
		for _, disk := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cache-dir=%v", kind.name, disk), func(t *testing.T) {
				root := t.TempDir()
				up := newUpstream(t, root, "fleet.git")
				opts := kind.opts(t, root, up)
				if disk {
					opts.Dir = t.TempDir()
				}
				var last string
				for round := range 4 {
					rev := kind.commit(up, fmt.Sprintf("change %d", round))
					last = restartAndPush(t, opts, rev, round)
				}
				dir := kind.refDir(up)
				if got := runGit(t, dir, "rev-parse", "refs/heads/"+DefaultStatusBranch); got != last {
					t.Fatalf("status branch at %s, want %s", got, last)
				}
				if n := runGit(t, dir, "rev-list", "--count", last); n != "4" {
					t.Fatalf("status branch has %s commits, want 4 (one per restart)", n)
				}
			})
		}
	}
}

// restartAndPush starts a new Source, syncs to rev and pushes a status
// commit on top of the existing status branch; it returns the commit.
func restartAndPush(t *testing.T, opts Options, rev string, round int) string {
	t.Helper()
	ctx := context.Background()
	src, err := NewSource(opts)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := src.Sync(ctx)
	if err != nil || got != rev {
		t.Fatalf("round %d: sync at %s, want %s: %v", round, got, rev, err)
	}
	req := statusRequest(map[string]string{"status/fleet.yaml": fmt.Sprintf("round: %d\n", round)}, rev)
	res, err := src.CommitAndPush(ctx, req)
	if err != nil || !res.Committed {
		t.Fatalf("round %d: status push: %+v %v", round, res, err)
	}
	return res.SHA
}
