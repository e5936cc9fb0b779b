package ui_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/ui"
	"github.com/regatta-dev/regatta/ui/access"
	"github.com/regatta-dev/regatta/ui/timeline"
)

var sinceT0 = time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)

// gitStatus is a repository whose status branch receives status commits
// written with status.FilesWith by the git CLI, at chosen times.
type gitStatus struct {
	tb      testing.TB
	dir     string
	written map[string]bool
	enc     status.RecordEncoder
}

func newGitStatus(tb testing.TB) *gitStatus {
	tb.Helper()
	g := &gitStatus{tb: tb, dir: tb.TempDir(), written: map[string]bool{}}
	g.git(time.Time{}, "init", "-q", "-b", repo.DefaultStatusBranch)
	g.git(time.Time{}, "config", "gc.auto", "0")
	return g
}

func (g *gitStatus) git(at time.Time, args ...string) string {
	g.tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "HOME="+g.dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=regatta", "GIT_AUTHOR_EMAIL=regatta@example.com",
		"GIT_COMMITTER_NAME=regatta", "GIT_COMMITTER_EMAIL=regatta@example.com")
	if !at.IsZero() {
		d := fmt.Sprintf("@%d +0000", at.Unix())
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit makes the status folder hold snap and commits it at at.
func (g *gitStatus) commit(snap status.Snapshot, at time.Time) string {
	g.tb.Helper()
	files, err := status.FilesWith(&g.enc, snap)
	if err != nil {
		g.tb.Fatal(err)
	}
	for name := range g.written {
		if _, ok := files[name]; !ok {
			os.Remove(filepath.Join(g.dir, name))
		}
	}
	g.written = map[string]bool{}
	for name, b := range files {
		p := filepath.Join(g.dir, name)
		if old, err := os.ReadFile(p); err != nil || string(old) != string(b) {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				g.tb.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				g.tb.Fatal(err)
			}
		}
		g.written[name] = true
	}
	g.git(time.Time{}, "add", "-A")
	g.git(at, "commit", "-q", "--allow-empty", "-m", "Update fleet status\n\n"+repo.TrailerSourceRevision+": "+snap.Fleet.SourceRevision)
	return g.git(time.Time{}, "rev-parse", "HEAD")
}

// sinceFleet is the fleet at commit i of fiveCommits: a's web pair fails
// from commit 2 on (the last 3 of 5), b's from 3 on after failing in 0 and
// 1, c is unreachable from 1 on, d's web pair fails in every commit and
// e's is Applied.
func sinceFleet(i int) status.Snapshot {
	rev := fmt.Sprintf("%040x", 0xabc000+i)
	pair := func(cluster string, failing bool) status.ClusterStatus {
		st := status.StateApplied
		if failing {
			st = status.StateFailed
		}
		return status.ClusterStatus{Cluster: cluster, SourceRevision: rev, Reachable: true,
			Profiles: []status.Profile{{Name: "web", State: st, Revision: rev, Message: "image pull failed"}}}
	}
	c := pair("c", false)
	c.Reachable = i < 1
	if !c.Reachable {
		c.Error = "dial tcp 10.0.0.3:6443: connection refused"
	}
	return status.Snapshot{Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: rev},
		Clusters: []status.ClusterStatus{pair("a", i >= 2), pair("b", i <= 1 || i >= 3), c, pair("d", true), pair("e", false)}}
}

// fiveCommits writes sinceFleet 0..4 a minute apart from sinceT0.
func fiveCommits(g *gitStatus) []string {
	var out []string
	for i := range 5 {
		out = append(out, g.commit(sinceFleet(i), sinceT0.Add(time.Duration(i)*time.Minute)))
	}
	return out
}

// serve runs a Server over h, following the branch as regatta ui does
// (Run's onMove is Server.Moved).
func serve(t *testing.T, r *timeline.Reader, h ui.History, bound int) *httptest.Server {
	t.Helper()
	srv := ui.New(ui.Options{History: h, SinceBound: bound})
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { r.Run(ctx, 20*time.Millisecond, srv.Moved) })
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		srv.Handler().ServeHTTP(w, req.WithContext(access.WithViewer(req.Context(), access.Viewer{Fleet: true})))
	}))
	t.Cleanup(func() { ts.Close(); cancel(); wg.Wait(); srv.Close() })
	return ts
}

func page(t *testing.T, ts *httptest.Server, path string) string {
	t.Helper()
	resp, err := ts.Client().Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v\n%s", path, resp.StatusCode, err, b)
	}
	return string(b)
}

// pageWith polls a page until it holds every fragment.
func pageWith(t *testing.T, ts *httptest.Server, path string, fragments ...string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		body := page(t, ts, path)
		missing := ""
		for _, f := range fragments {
			if !strings.Contains(body, f) {
				missing = f
				break
			}
		}
		if missing == "" {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s lacks %q after 20s:\n%s", path, missing, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func at(minutes int) string {
	return sinceT0.Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339)
}

func localReader(t *testing.T, g *gitStatus) *timeline.Reader {
	t.Helper()
	r, err := timeline.Local(g.dir, repo.DefaultStatusBranch, timeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The fleet page's problems and the cluster page's pairs say since when
// they have been so, from the status branch's history.
func TestSinceFromHistory(t *testing.T) {
	g := newGitStatus(t)
	commits := fiveCommits(g)
	r := localReader(t, g)
	ts := serve(t, r, r, 0)
	body := pageWith(t, ts, "/", `data-commit="`+commits[4]+`"`, `data-since=`)
	for _, want := range []string{
		// failing in the last 3 of 5 commits: the third-newest's time
		`<li data-cluster="a" data-profile="web" data-state="Failed">` + `<a href="/clusters/a">a</a> / <a href="/profiles/web">web</a> <span class="state s-Failed">Failed</span> <span class="msg since" data-since="` + at(2) + `">`,
		// recovered in commit 2: the later start
		`data-since="` + at(3) + `"`,
		// unreachable from commit 1 on
		`data-state="Unreachable"><a href="/clusters/c">c</a> <span class="state s-Unreachable">Unreachable</span> <span class="msg since" data-since="` + at(1) + `">`,
		// failing since the branch's first commit: that commit, not "before"
		`data-since="` + at(0) + `"`,
		"since 09:02 UTC",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("fleet page lacks %q", want)
		}
	}
	if strings.Contains(body, "data-since-before") {
		t.Error("fleet page says since before with the whole history walked")
	}
	cl := page(t, ts, "/clusters/a")
	if !strings.Contains(cl, `<span class="state s-Failed">Failed</span> <span class="msg since" data-since="`+at(2)+`">`) {
		t.Errorf("cluster page of a lacks the pair's start:\n%s", cl)
	}
	if cl := page(t, ts, "/clusters/c"); !strings.Contains(cl, `data-reachable="false"><span class="state s-Unreachable">no</span> <span class="msg since" data-since="`+at(1)+`">`) {
		t.Errorf("cluster page of c lacks since when it is unreachable:\n%s", cl)
	}
	if old := page(t, ts, "/?at="+commits[3]); strings.Contains(old, "data-since") {
		t.Error("time travel shows starts computed for the head")
	}
}

// A walk that reaches its bound says "since before" the oldest commit it
// walked.
func TestSinceBound(t *testing.T) {
	g := newGitStatus(t)
	commits := fiveCommits(g)
	r := localReader(t, g)
	ts := serve(t, r, r, 1)
	body := pageWith(t, ts, "/", `data-commit="`+commits[4]+`"`, `data-since`)
	for _, want := range []string{
		`data-profile="web" data-state="Failed"><a href="/clusters/a">a</a> / <a href="/profiles/web">web</a> <span class="state s-Failed">Failed</span> <span class="msg since" data-since-before="` + at(3) + `">`,
		"since before 09:03 UTC",
		`data-cluster="d" data-profile="web" data-state="Failed"><a href="/clusters/d">d</a> / <a href="/profiles/web">web</a> <span class="state s-Failed">Failed</span> <span class="msg since" data-since-before="` + at(3) + `">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("fleet page lacks %q\n%s", want, body)
		}
	}
}

// gatedHistory holds the first Parent call until its context ends, and
// records that it ended.
type gatedHistory struct {
	ui.History
	once     sync.Once
	entered  chan string
	canceled chan struct{}
}

func (h *gatedHistory) Parent(ctx context.Context, commit string) (ui.Frame, error) {
	first := false
	h.once.Do(func() { first = true })
	if !first {
		return h.History.Parent(ctx, commit)
	}
	h.entered <- commit
	<-ctx.Done()
	close(h.canceled)
	return ui.Frame{}, ctx.Err()
}

// A head that moves while the walk for the one before is under way cancels
// that walk and starts one for the new head.
func TestSinceHeadMovesMidWalk(t *testing.T) {
	g := newGitStatus(t)
	commits := fiveCommits(g)
	r := localReader(t, g)
	h := &gatedHistory{History: r, entered: make(chan string, 1), canceled: make(chan struct{})}
	ts := serve(t, r, h, 0)
	page(t, ts, "/")
	select {
	case c := <-h.entered:
		if c != commits[4] {
			t.Fatalf("the walk started at %s; want the head %s", c, commits[4])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no walk started in 20s")
	}
	if body := page(t, ts, "/"); strings.Contains(body, "data-since") {
		t.Error("starts shown before any walk ended")
	}
	next := sinceFleet(4)
	next.Fleet.SourceRevision = strings.Repeat("f", 40)
	head := g.commit(next, sinceT0.Add(5*time.Minute))
	select {
	case <-h.canceled:
	case <-time.After(20 * time.Second):
		t.Fatal("the walk for the old head was not canceled in 20s after the head moved")
	}
	pageWith(t, ts, "/", `data-commit="`+head+`"`, `data-profile="web" data-state="Failed"><a href="/clusters/a">a</a> / <a href="/profiles/web">web</a> <span class="state s-Failed">Failed</span> <span class="msg since" data-since="`+at(2)+`">`)
}

// FindStarts stops at the first commit, or where the history was folded.
func TestFindStartsEnds(t *testing.T) {
	g := newGitStatus(t)
	commits := fiveCommits(g)
	r := localReader(t, g)
	head, err := r.Frame(t.Context(), commits[4])
	if err != nil {
		t.Fatal(err)
	}
	got, err := ui.FindStarts(t.Context(), r, head, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := map[ui.ProblemKey]ui.Start{
		{Cluster: "a", Profile: "web"}: {Time: sinceT0.Add(2 * time.Minute)},
		{Cluster: "b", Profile: "web"}: {Time: sinceT0.Add(3 * time.Minute)},
		{Cluster: "c"}:                 {Time: sinceT0.Add(time.Minute)},
		{Cluster: "d", Profile: "web"}: {Time: sinceT0},
	}
	if len(got) != len(want) {
		t.Errorf("FindStarts = %v; want %v", got, want)
	}
	for k, w := range want {
		if s := got[k]; !s.Time.Equal(w.Time) || s.Before != w.Before {
			t.Errorf("FindStarts[%v] = %v; want %v", k, s, w)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ui.FindStarts(ctx, r, head, 100); !errors.Is(err, context.Canceled) {
		t.Errorf("FindStarts with its context ended: %v; want context.Canceled", err)
	}
}
