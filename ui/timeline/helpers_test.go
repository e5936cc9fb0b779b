package timeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
)

const branch = repo.DefaultStatusBranch

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Fprintln(os.Stderr, "the git CLI is required by these tests:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// statusRepo is a bare repository (what a Git host stores) and a clone
// whose status branch receives status commits written with status.Files
// by the git CLI, at chosen times.
type statusRepo struct {
	t          testing.TB
	bare, work string
	written    map[string][]byte // the status files in the clone
	enc        status.RecordEncoder
}

func newStatusRepo(t testing.TB) *statusRepo {
	t.Helper()
	root := t.TempDir()
	s := &statusRepo{t: t, bare: filepath.Join(root, "fleet.git"), work: filepath.Join(root, "work"), written: map[string][]byte{}}
	s.git(root, "init", "-q", "--bare", "-b", "main", s.bare)
	s.git(root, "init", "-q", "-b", "main", s.work)
	s.git(s.work, "remote", "add", "origin", s.bare)
	// no gc in the background while a test or benchmark commits and pushes
	s.git(s.work, "config", "gc.auto", "0")
	s.git(s.bare, "config", "gc.auto", "0")
	s.git(s.bare, "config", "receive.autogc", "false")
	if err := os.WriteFile(filepath.Join(s.work, "README.md"), []byte("fleet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.git(s.work, "add", "-A")
	s.git(s.work, "commit", "-q", "-m", "fleet")
	s.git(s.work, "push", "-q", "origin", "main")
	s.git(s.work, "checkout", "-q", "--orphan", branch)
	s.git(s.work, "rm", "-q", "-rf", ".")
	return s
}

// git runs the git CLI in dir, isolated from the user's configuration;
// gitAt sets the commit dates to at.
func (s *statusRepo) git(dir string, args ...string) string {
	s.t.Helper()
	return s.gitAt(dir, time.Time{}, args...)
}

func (s *statusRepo) gitAt(dir string, at time.Time, args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=regatta", "GIT_AUTHOR_EMAIL=regatta@example.com",
		"GIT_COMMITTER_NAME=regatta", "GIT_COMMITTER_EMAIL=regatta@example.com")
	if !at.IsZero() {
		d := fmt.Sprintf("@%d +0000", at.Unix())
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes snap as the status folder, commits it at at and pushes
// it; it returns the commit.
func (s *statusRepo) commit(snap status.Snapshot, at time.Time) string {
	s.t.Helper()
	files, err := status.FilesWith(&s.enc, snap)
	if err != nil {
		s.t.Fatal(err)
	}
	s.write(files)
	s.git(s.work, "add", "-A")
	s.gitAt(s.work, at, "commit", "-q", "-m", "Update fleet status\n\n"+repo.TrailerSourceRevision+": "+snap.Fleet.SourceRevision)
	s.git(s.work, "push", "-q", "-f", "origin", "HEAD:"+branch)
	return s.git(s.work, "rev-parse", "HEAD")
}

// write makes the clone's status folder hold files, writing only the
// files that changed.
func (s *statusRepo) write(files map[string][]byte) {
	s.t.Helper()
	for name := range s.written {
		if _, ok := files[name]; !ok {
			if err := os.Remove(filepath.Join(s.work, name)); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	for name, b := range files {
		if bytes.Equal(s.written[name], b) {
			continue
		}
		p := filepath.Join(s.work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
	s.written = files
}

// pull moves the clone's status branch to the bare repository's (after
// a fold rewrote it).
func (s *statusRepo) pull() {
	s.t.Helper()
	s.git(s.work, "fetch", "-q", "origin", branch)
	s.git(s.work, "reset", "-q", "--hard", "FETCH_HEAD")
}

// source is a Source over the bare repository, with the whole history.
func (s *statusRepo) source() *repo.Source {
	s.t.Helper()
	src, err := repo.NewSource(repo.Options{URL: s.bare, Branch: branch, FullHistory: true})
	if err != nil {
		s.t.Fatal(err)
	}
	return src
}

// read is status.Read of the status branch at commit, its clusters in
// name order: what a frame must hold.
func (s *statusRepo) read(commit string) status.Snapshot {
	s.t.Helper()
	r, err := repo.Open(s.work)
	if err != nil {
		s.t.Fatal(err)
	}
	tree, err := r.Tree(context.Background(), commit)
	if err != nil {
		s.t.Fatal(err)
	}
	snap, err := status.Read(tree)
	if err != nil {
		s.t.Fatal(err)
	}
	sort.Slice(snap.Clusters, func(i, j int) bool { return snap.Clusters[i].Cluster < snap.Clusters[j].Cluster })
	return snap
}

// fleet is a snapshot at source revision rev of the given clusters.
func fleet(rev string, clusters ...status.ClusterStatus) status.Snapshot {
	return status.Snapshot{Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: rev}, Clusters: clusters}
}

// cluster is the record of a cluster reconciled against rev, its profile
// in state.
func cluster(name, rev, state string) status.ClusterStatus {
	return status.ClusterStatus{Cluster: name, SourceRevision: rev, Reachable: true,
		Labels:   map[string]string{"env": "prod"},
		Profiles: []status.Profile{{Name: "base", State: state, Revision: rev, Objects: 3}}}
}

// rev is a fleet revision, a commit hash.
func rev(i int) string { return fmt.Sprintf("%040x", 0xabc000+i) }
