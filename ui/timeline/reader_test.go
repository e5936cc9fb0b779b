package timeline

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/ui"
)

var t0 = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)

// history writes four status commits a minute apart: clusters reach new
// revisions, a record changes without one, a cluster comes and one goes,
// and the last fleet revision does not take effect.
func history(s *statusRepo) []string {
	fleet3 := fleet(rev(3), cluster("b", rev(1), "Failed"), cluster("c", rev(2), "Applied"), cluster("d", rev(2), "Applied"))
	fleet3.Fleet.AppliedRevision = rev(2)
	return []string{
		s.commit(fleet(rev(1), cluster("a", rev(1), "Applied"), cluster("b", rev(1), "Applied"), cluster("c", rev(1), "Applied")), t0),
		s.commit(fleet(rev(2), cluster("a", rev(2), "Applied"), cluster("b", rev(1), "Applied"), cluster("c", rev(1), "Applied")), t0.Add(time.Minute)),
		s.commit(fleet(rev(2), cluster("a", rev(2), "Applied"), cluster("b", rev(1), "Failed"), cluster("c", rev(1), "Applied"),
			cluster("d", rev(2), "Applied")), t0.Add(2*time.Minute)),
		s.commit(fleet3, t0.Add(3*time.Minute)),
	}
}

// readers are the two ways to the same branch: the clone on this
// machine, and the bare repository fetched as a remote one.
func readers(t *testing.T, s *statusRepo, opts Options) map[string]*Reader {
	t.Helper()
	l, err := Local(s.work, branch, opts)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Reader{"local": l, "remote": New(s.source(), branch, opts)}
}

// A walk back by Parent, longer than the frame cache, keeps the head's
// frame cached.
func TestParentKeepsHead(t *testing.T) {
	s := newStatusRepo(t)
	commits := history(s)
	r, err := Local(s.work, branch, Options{Frames: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := r.Head(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 3; i > 0; i-- {
		if p, err := r.Parent(ctx, commits[i]); err != nil || p.Commit != commits[i-1] {
			t.Fatalf("Parent(%d) = %s, %v", i, p.Commit, err)
		}
	}
	if _, ok := r.frames.get(commits[3]); !ok {
		t.Error("the head's frame was forgotten by a walk back")
	}
}

// Head, At and Frame give what status.Read reads at the commit; At takes
// the newest commit at or before a time and refuses one before the
// first; Frame takes full and abbreviated hashes of the branch only.
func TestFrames(t *testing.T) {
	s := newStatusRepo(t)
	commits := history(s)
	mainCommit := s.git(s.bare, "rev-parse", "main")
	for name, r := range readers(t, s, Options{}) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			head, err := r.Head(ctx)
			if err != nil || head.Commit != commits[3] || !head.Time.Equal(t0.Add(3*time.Minute)) {
				t.Fatalf("Head = %s at %s, %v; want %s", head.Commit, head.Time, err, commits[3])
			}
			checkFrame(t, s, head, commits[3])
			for _, tt := range []struct {
				at   time.Time
				want string
			}{
				{t0, commits[0]},
				{t0.Add(90 * time.Second), commits[1]},
				{t0.Add(2 * time.Minute), commits[2]},
				{t0.Add(time.Hour), commits[3]},
			} {
				f, err := r.At(ctx, tt.at)
				if err != nil || f.Commit != tt.want {
					t.Errorf("At(%s) = %s, %v; want %s", tt.at, f.Commit, err, tt.want)
				}
			}
			if f, err := r.At(ctx, t0.Add(-time.Second)); !errors.Is(err, ui.ErrBeforeHistory) {
				t.Errorf("At before the first commit = %s, %v; want ErrBeforeHistory", f.Commit, err)
			}
			for _, c := range []string{commits[1], commits[1][:7], commits[1][:4]} {
				f, err := r.Frame(ctx, c)
				if err != nil || f.Commit != commits[1] {
					t.Errorf("Frame(%s) = %s, %v; want %s", c, f.Commit, err, commits[1])
				}
			}
			for i := 3; i > 0; i-- { // walking back, each one tree diff from the one after
				p, err := r.Parent(ctx, commits[i])
				if err != nil || p.Commit != commits[i-1] || !p.Time.Equal(t0.Add(time.Duration(i-1)*time.Minute)) {
					t.Fatalf("Parent(%d) = %s, %v; want %s", i, p.Commit, err, commits[i-1])
				}
				checkFrame(t, s, p, commits[i-1])
			}
			if p, err := r.Parent(ctx, commits[0]); !errors.Is(err, ui.ErrNoParent) {
				t.Errorf("Parent of the first commit = %s, %v; want ErrNoParent", p.Commit, err)
			}
			if p, err := r.Parent(ctx, mainCommit); !errors.Is(err, ui.ErrUnknownCommit) {
				t.Errorf("Parent of a commit off the branch = %s, %v; want ErrUnknownCommit", p.Commit, err)
			}
			for _, c := range []string{mainCommit, mainCommit[:8], "zzzzzzz", "ab", ""} {
				if f, err := r.Frame(ctx, c); !errors.Is(err, ui.ErrUnknownCommit) {
					t.Errorf("Frame(%q) = %s, %v; want ErrUnknownCommit", c, f.Commit, err)
				}
			}
		})
	}
}

// Every frame equals status.Read at its commit, whether read whole or
// replayed from an older cached frame, in either order of asking.
func TestFramesReplayed(t *testing.T) {
	s := newStatusRepo(t)
	commits := history(s)
	for name, order := range map[string][]string{
		"oldest first": commits,
		"newest first": {commits[3], commits[2], commits[1], commits[0]},
		"skipping":     {commits[0], commits[3], commits[1], commits[2]},
	} {
		t.Run(name, func(t *testing.T) {
			r := New(s.source(), branch, Options{Frames: 2})
			for _, c := range order {
				f, err := r.Frame(t.Context(), c)
				if err != nil {
					t.Fatal(err)
				}
				checkFrame(t, s, f, c)
			}
		})
	}
}

func checkFrame(t *testing.T, s *statusRepo, f ui.Frame, commit string) {
	t.Helper()
	if want := s.read(commit); f.Commit != commit || !reflect.DeepEqual(f.Snapshot, want) {
		t.Errorf("frame of %s (%s):\n%+v\nwant status.Read's\n%+v", commit, f.Commit, f.Snapshot, want)
	}
}

// Timeline lists the commits newest first with the fleet's revisions,
// the records each wrote and the clusters that reached a revision: all
// of them in the first commit, none for a record that changed otherwise.
func TestTimeline(t *testing.T) {
	s := newStatusRepo(t)
	commits := history(s)
	arrival := func(cluster string, r, i int) ui.Arrival {
		return ui.Arrival{Cluster: cluster, Revision: rev(r), Time: t0.Add(time.Duration(i) * time.Minute), Commit: commits[i]}
	}
	entry := func(i, source, applied, changed int, arrivals ...ui.Arrival) ui.Entry {
		return ui.Entry{Commit: commits[i], Time: t0.Add(time.Duration(i) * time.Minute), SourceRevision: rev(source),
			AppliedRevision: rev(applied), Changed: changed, Arrivals: arrivals}
	}
	want := []ui.Entry{
		entry(3, 3, 2, 1, arrival("c", 2, 3)),
		entry(2, 2, 2, 2, arrival("d", 2, 2)),
		entry(1, 2, 2, 1, arrival("a", 2, 1)),
		entry(0, 1, 1, 3, arrival("a", 1, 0), arrival("b", 1, 0), arrival("c", 1, 0)),
	}
	for name, r := range readers(t, s, Options{}) {
		t.Run(name, func(t *testing.T) {
			for _, n := range []int{2, 10, 0, 4} { // the first asks for part, the others reuse it
				got, err := r.Timeline(t.Context(), n)
				wantN := want
				if n == 2 {
					wantN = want[:2]
				}
				if err != nil || !equalEntries(got, wantN) {
					t.Errorf("Timeline(%d) = %v\n%+v\nwant\n%+v", n, err, got, wantN)
				}
			}
		})
	}
}

func equalEntries(a, b []ui.Entry) bool {
	return slices.EqualFunc(a, b, func(x, y ui.Entry) bool {
		return x.Commit == y.Commit && x.Time.Equal(y.Time) && x.SourceRevision == y.SourceRevision &&
			x.AppliedRevision == y.AppliedRevision && x.Changed == y.Changed && x.Folded == y.Folded &&
			slices.EqualFunc(x.Arrivals, y.Arrivals, func(p, q ui.Arrival) bool {
				return p.Cluster == q.Cluster && p.Revision == q.Revision && p.Time.Equal(q.Time) && p.Commit == q.Commit
			})
	})
}

// A repository without a status branch says so, and so does every method.
func TestNoBranch(t *testing.T) {
	s := newStatusRepo(t)
	for name, r := range readers(t, s, Options{}) {
		if _, err := r.Head(t.Context()); !errors.Is(err, ErrNoBranch) {
			t.Errorf("%s: Head without a status branch: %v; want ErrNoBranch", name, err)
		}
		if _, err := r.Timeline(t.Context(), 5); !errors.Is(err, ErrNoBranch) {
			t.Errorf("%s: Timeline without a status branch: %v; want ErrNoBranch", name, err)
		}
	}
}

// recordRevision reads what YAML reads, fast for the hashes status.Files
// writes.
func TestRecordRevision(t *testing.T) {
	for _, r := range []string{rev(1), "0123456789012345678901234567890123456789", "1e34567890123456789012345678901234567890",
		"abc", "", "main", "0123456789abcdef0123456789abcdef01234567", "ff" + rev(2)[2:] + rev(2)[:24]} {
		files, err := status.Files(fleet(r, cluster("x", r, "Applied")))
		if err != nil {
			t.Fatal(err)
		}
		got, err := recordRevision(files[status.ClusterFile("x")])
		if err != nil || got != r {
			t.Errorf("recordRevision of a record at %q = %q, %v\n%s", r, got, err, files[status.ClusterFile("x")])
		}
	}
	for _, b := range []string{"sourceRevision: '" + rev(1) + "'\n", "sourceRevision: \"" + rev(1) + "\"\n", "a: 1\nsourceRevision:  " + rev(1) + "  \n"} {
		if got, err := recordRevision([]byte(b)); err != nil || got != rev(1) {
			t.Errorf("recordRevision(%q) = %q, %v", b, got, err)
		}
	}
	if _, err := recordRevision([]byte("sourceRevision: [\n")); err == nil {
		t.Error("recordRevision of broken YAML: no error")
	}
}

// Open reads a clone's folder as Local does and a bare repository's
// folder or a URL as New does.
func TestOpen(t *testing.T) {
	s := newStatusRepo(t)
	head := history(s)[3]
	for _, loc := range []string{s.work, s.bare, "file://" + s.bare} {
		r, err := Open(loc, branch, Options{})
		if err != nil {
			t.Fatalf("Open(%s): %v", loc, err)
		}
		if _, local := r.git.(*local); local != (loc == s.work) {
			t.Errorf("Open(%s) reads it as a local clone: %v", loc, local)
		}
		if f, err := r.Head(t.Context()); err != nil || f.Commit != head {
			t.Errorf("Open(%s).Head = %s, %v; want %s", loc, f.Commit, err, head)
		}
	}
	if _, err := Open(t.TempDir(), branch, Options{}); err == nil {
		t.Error("Open of a folder that is no repository: no error")
	}
}
