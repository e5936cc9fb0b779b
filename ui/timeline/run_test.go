package timeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/ui"
)

// waitFor polls cond until it holds, or fails the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncBuffer is a log a test reads while Run writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) contains(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(s.b.String(), text)
}

// runReader runs r.Run in the background until the test ends; it returns
// how many moves Run reported.
func runReader(t *testing.T, r *Reader) func() int {
	var mu sync.Mutex
	moves := 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx, 20*time.Millisecond, func() {
			mu.Lock()
			moves++
			mu.Unlock()
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return moves
	}
}

// Run sees the branch move, in a remote repository and in a local one
// (whose objects moved into a new pack meanwhile), decodes the new head
// and calls onMove; while the Git host is away it logs the error, keeps
// the last view and reads the branch again when the host is back.
func TestRunFollowsTheBranch(t *testing.T) {
	for _, kind := range []string{"remote", "local"} {
		t.Run(kind, func(t *testing.T) {
			s := newStatusRepo(t)
			first := s.commit(fleet(rev(1), cluster("a", rev(1), "Applied")), t0)
			repack := func() { // what the reader reads moves into a new pack, as git gc does
				s.git(s.work, "repack", "-q", "-a", "-d")
				s.git(s.bare, "repack", "-q", "-a", "-d")
			}
			repack()
			var log syncBuffer
			opts := Options{Log: slog.New(slog.NewTextHandler(&log, nil))}
			r := readers(t, s, opts)[kind]
			moves := runReader(t, r)
			headIs := func(want string) func() bool {
				return func() bool { f, err := r.Head(t.Context()); return err == nil && f.Commit == want }
			}
			waitFor(t, "the first head", func() bool { return moves() == 1 && headIs(first)() })
			second := s.commit(fleet(rev(2), cluster("a", rev(2), "Applied")), t0.Add(time.Minute))
			repack()
			waitFor(t, "the second move", func() bool { return moves() == 2 })
			if _, ok := r.frames.get(second); !ok {
				t.Error("Run called onMove before decoding the new head")
			}
			waitFor(t, "the second head", func() bool { return headIs(second)() })
			if kind == "local" {
				return
			}
			away := s.bare + ".away"
			if err := os.Rename(s.bare, away); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the fetch error logged", func() bool { return log.contains("status branch not read") })
			if f, err := r.Head(t.Context()); err != nil || f.Commit != second || moves() != 2 {
				t.Fatalf("while the host is away: Head = %s, %v after %d moves; want %s still", f.Commit, err, moves(), second)
			}
			if err := os.Rename(away, s.bare); err != nil {
				t.Fatal(err)
			}
			third := s.commit(fleet(rev(3), cluster("a", rev(3), "Applied")), t0.Add(2*time.Minute))
			waitFor(t, "the third head", func() bool { return moves() == 3 && headIs(third)() })
			if !log.contains("status branch read again") {
				t.Errorf("the recovery is not logged:\n%s", log.b.String())
			}
		})
	}
}

// A history folded by FoldHistory (--status-history-keep) ends the
// timeline at the commit the fold left, marked Folded and without
// arrivals; a time before it is before the history; the commits it
// rewrote are unknown; status commits made after the fold extend it.
// Readers that had read the history before the fold (one of them through
// a clone of its own, which is made again without the folded history)
// and one that reads it after agree.
func TestFoldedHistory(t *testing.T) {
	s := newStatusRepo(t)
	var old []string
	for i := range 6 {
		old = append(old, s.commit(fleet(rev(i), cluster("a", rev(i), "Applied"), cluster("b", rev(i/2), "Applied")),
			t0.Add(time.Duration(i)*time.Minute)))
	}
	ctx := t.Context()
	before := New(s.source(), branch, Options{})
	opened, err := Open("file://"+s.bare, branch, Options{}) // its clone is its own
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Reader{before, opened} {
		if tl, err := r.Timeline(ctx, 0); err != nil || len(tl) != 6 || tl[5].Folded {
			t.Fatalf("Timeline before the fold: %d entries, %v", len(tl), err)
		}
	}
	folder, err := repo.NewSource(repo.Options{URL: s.bare})
	if err != nil {
		t.Fatal(err)
	}
	res, err := folder.FoldHistory(ctx, branch, 3)
	if err != nil || !res.Folded {
		t.Fatalf("fold: %+v, %v", res, err)
	}
	for _, r := range []*Reader{before, opened} {
		if moved, err := r.refresh(ctx); err != nil || !moved {
			t.Fatalf("refresh after the fold: moved %v, %v", moved, err)
		}
	}
	if _, err := opened.git.(*remote).source().Resolve(ctx, old[0]); err == nil {
		t.Error("the clone Open made still holds the folded history")
	}
	s.pull()
	after, err := Local(s.work, branch, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Reader{"read before": before, "opened before": opened, "read after": after} {
		checkFolded(t, name, r, s, old)
	}
	newest := s.commit(fleet(rev(6), cluster("a", rev(6), "Applied"), cluster("b", rev(3), "Applied")), t0.Add(6*time.Minute))
	if moved, err := before.refresh(ctx); err != nil || !moved {
		t.Fatalf("refresh after a commit on the folded branch: moved %v, %v", moved, err)
	}
	tl, err := before.Timeline(ctx, 10)
	if err != nil || len(tl) != 4 || tl[0].Commit != newest || !tl[3].Folded || len(tl[0].Arrivals) != 2 {
		t.Errorf("Timeline after a commit on the folded branch: %v\n%+v", err, tl)
	}
}

func checkFolded(t *testing.T, name string, r *Reader, s *statusRepo, old []string) {
	t.Helper()
	ctx := t.Context()
	tl, err := r.Timeline(ctx, 10)
	if err != nil || len(tl) != 3 {
		t.Fatalf("%s: Timeline of the folded history: %d entries, %v; want 3", name, len(tl), err)
	}
	fold := tl[2]
	if !fold.Folded || fold.Arrivals != nil || fold.Changed != 0 || !fold.Time.Equal(t0.Add(3*time.Minute)) ||
		fold.SourceRevision != rev(3) || tl[1].Folded {
		t.Errorf("%s: the fold's entry = %+v; want Folded, no arrivals, at %s, source %s", name, fold, t0.Add(3*time.Minute), rev(3))
	}
	if a := tl[1].Arrivals; len(a) != 2 || a[0].Cluster != "a" || a[1].Revision != rev(2) || tl[1].Changed != 2 {
		t.Errorf("%s: the entry after the fold: %+v", name, tl[1])
	}
	if f, err := r.At(ctx, t0.Add(2*time.Minute)); !errors.Is(err, ui.ErrBeforeHistory) ||
		!strings.Contains(err.Error(), t0.Add(3*time.Minute).Format(time.RFC3339)) {
		t.Errorf("%s: At a folded time = %s, %v; want ErrBeforeHistory naming the oldest kept", name, f.Commit, err)
	}
	f, err := r.At(ctx, t0.Add(3*time.Minute))
	if err != nil || f.Commit != fold.Commit {
		t.Errorf("%s: At the fold's time = %s, %v; want %s", name, f.Commit, err, fold.Commit)
	}
	checkFrame(t, s, f, fold.Commit)
	if p, err := r.Parent(ctx, fold.Commit); !errors.Is(err, ui.ErrBeforeHistory) {
		t.Errorf("%s: Parent of the fold = %s, %v; want ErrBeforeHistory", name, p.Commit, err)
	}
	if p, err := r.Parent(ctx, tl[1].Commit); err != nil || p.Commit != fold.Commit {
		t.Errorf("%s: Parent of the commit after the fold = %s, %v; want %s", name, p.Commit, err, fold.Commit)
	}
	for i, c := range old {
		if f, err := r.Frame(ctx, c); !errors.Is(err, ui.ErrUnknownCommit) {
			t.Errorf("%s: Frame of commit %d rewritten by the fold = %s, %v; want ErrUnknownCommit", name, i, f.Commit, err)
		}
	}
	if t.Failed() {
		t.Log(fmt.Sprintf("%s: timeline %+v", name, tl))
	}
}

// Pages read the history from many goroutines while Run follows the
// branch: every answer is a frame or timeline of a commit of the branch
// (go test -race checks the sharing).
func TestConcurrentReads(t *testing.T) {
	s := newStatusRepo(t)
	commits := []string{s.commit(fleet(rev(0), cluster("a", rev(0), "Applied")), t0)}
	r := New(s.source(), branch, Options{Frames: 2})
	moves := runReader(t, r)
	waitFor(t, "the first head", func() bool { return moves() == 1 })
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := readOnce(ctx, r, g); err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := 1; i < 6; i++ {
		commits = append(commits, s.commit(fleet(rev(i), cluster("a", rev(i), "Applied"), cluster(fmt.Sprint("c", i), rev(i), "Applied")),
			t0.Add(time.Duration(i)*time.Minute)))
		waitFor(t, fmt.Sprintf("move %d", i+1), func() bool { return moves() == i+1 })
	}
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tl, err := r.Timeline(t.Context(), 0)
	if err != nil || len(tl) != 6 || tl[0].Commit != commits[5] || len(tl[0].Arrivals) != 2 {
		t.Errorf("Timeline after the reads: %v\n%+v", err, tl)
	}
	for i, c := range commits {
		f, err := r.Frame(t.Context(), c)
		if err != nil {
			t.Fatal(err)
		}
		checkFrame(t, s, f, commits[i])
	}
}

// readOnce reads one thing, by the goroutine's number.
func readOnce(ctx context.Context, r *Reader, g int) error {
	switch g {
	case 0:
		_, err := r.Head(ctx)
		return err
	case 1:
		_, err := r.Timeline(ctx, 3)
		return err
	case 2:
		_, err := r.At(ctx, t0.Add(150*time.Second))
		return err
	}
	tl, err := r.Timeline(ctx, 0)
	if err != nil {
		return err
	}
	_, err = r.Frame(ctx, tl[len(tl)-1].Commit[:7])
	return err
}
