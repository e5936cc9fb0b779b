package ui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// SinceBound is how many status commits the UI walks back, at most, to
// find since when each problem of the head has been so.
const SinceBound = 100

// ProblemKey names a problem: a pair (cluster and profile), or a cluster
// that cannot be reached (Profile empty).
type ProblemKey struct{ Cluster, Profile string }

// Start is since when a problem has been so: the time of the oldest status
// commit, walking back from the head, that already showed it without
// interruption. Before: the walk stopped (the bound, or the history's
// folded end) with the problem still there, so it began before Time.
type Start struct {
	Time   time.Time
	Before bool
}

// starts are the Starts of one head's problems.
type starts struct {
	head string // the frame they are for (frameKey)
	of   map[ProblemKey]Start
}

// sinceTracker finds the Starts of the head's problems in the background,
// once per head, walking back through the History no further than needed
// (and at most bound commits); a new head cancels the walk under way.
type sinceTracker struct {
	hist  History
	bound int
	log   *slog.Logger
	// head reads the frame the walks start from (the Server's head, the
	// whole fleet's).
	head func(context.Context) (Frame, bool, error)
	// done is called when a walk has found the Starts of a new head.
	done func()

	base context.Context // ends with close
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu      sync.Mutex
	result  starts
	walking string             // the frame the walk under way is for
	cancel  context.CancelFunc // the walk under way
}

func newSinceTracker(h History, bound int, log *slog.Logger, head func(context.Context) (Frame, bool, error), done func()) *sinceTracker {
	base, stop := context.WithCancel(context.Background())
	return &sinceTracker{hist: h, bound: bound, log: log, head: head, done: done, base: base, stop: stop}
}

// frameKey names a frame: its commit, or a daemon's newest status by its
// time.
func frameKey(f Frame) string {
	if f.Commit != "" {
		return f.Commit
	}
	return "live@" + f.Time.UTC().Format(time.RFC3339Nano)
}

// lookup is the Starts of f's problems when they are known (f may be a
// viewer's part of the frame: the keys are the same).
func (t *sinceTracker) lookup(f Frame) (map[ProblemKey]Start, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.result.head != frameKey(f) {
		return nil, false
	}
	return t.result.of, true
}

// kick reads the head in the background and, unless its Starts are known
// or being found, cancels the walk under way and starts one for it. It
// never waits.
func (t *sinceTracker) kick() {
	if t.base.Err() != nil {
		return
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		f, _, err := t.head(t.base)
		if err != nil {
			return // the pages say why
		}
		t.start(f)
	}()
}

// start walks back from f unless f's Starts are known or being found.
func (t *sinceTracker) start(f Frame) {
	k := frameKey(f)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.result.head == k || t.walking == k || t.base.Err() != nil {
		return
	}
	if t.cancel != nil {
		t.cancel()
	}
	ctx, cancel := context.WithCancel(t.base)
	t.walking, t.cancel = k, cancel
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer cancel()
		t.finished(ctx, k, f)
	}()
}

// finished runs the walk for f (named k) and keeps its result unless a
// newer head took its place meanwhile.
func (t *sinceTracker) finished(ctx context.Context, k string, f Frame) {
	got, err := FindStarts(ctx, t.hist, f, t.bound)
	if err != nil {
		if ctx.Err() == nil {
			t.log.Warn("ui: find since when the problems are so", "head", k, "error", err)
		}
		t.mu.Lock()
		if t.walking == k { // the next kick tries again
			t.walking = ""
		}
		t.mu.Unlock()
		return
	}
	t.mu.Lock()
	fresh := t.walking == k
	if fresh {
		t.result, t.walking = starts{head: k, of: got}, ""
	}
	t.mu.Unlock()
	if fresh && t.done != nil {
		t.done()
	}
}

// close cancels the walk under way and waits for the tracker's
// goroutines.
func (t *sinceTracker) close() {
	t.stop()
	t.wg.Wait()
}

// problemStates are the problems of a snapshot, by key, with their
// state: an unreachable cluster, a Failed, Conflict or Progressing pair.
func problemStates(s status.Snapshot) map[ProblemKey]string {
	out := map[ProblemKey]string{}
	for _, c := range s.Clusters {
		if !c.Reachable || c.Error != "" {
			out[ProblemKey{Cluster: c.Cluster}] = StateUnreachable
		}
		for _, p := range c.Profiles {
			if sinceTracked(p.State) {
				out[ProblemKey{c.Cluster, p.Name}] = p.State
			}
		}
	}
	return out
}

// sinceTracked: the pair states whose start the UI finds. Progressing is
// one, so that a pair stuck in it shows for how long.
func sinceTracked(state string) bool { return failing(state) || state == status.StateProgressing }

// FindStarts walks back from head, one commit at a time (History.Parent),
// until it has found where each of head's problems began, or bound
// commits, or the history's first commit (where the ones left began) or
// folded end (where they began before). A problem is an unreachable
// cluster or a Failed, Conflict or Progressing pair; it began at the
// oldest commit that showed it in the same state without interruption.
// A head with no commit (a daemon's newest status) steps to the branch's
// head first.
func FindStarts(ctx context.Context, h History, head Frame, bound int) (map[ProblemKey]Start, error) {
	open := problemStates(head.Snapshot)
	out := make(map[ProblemKey]Start, len(open))
	newer := head
	for n := 0; len(open) > 0; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if n == bound {
			return finish(out, open, newer.Time, true), nil
		}
		f, err := older(ctx, h, newer)
		switch {
		case errors.Is(err, ErrNoParent):
			return finish(out, open, newer.Time, false), nil
		case errors.Is(err, ErrBeforeHistory):
			return finish(out, open, newer.Time, true), nil
		case err != nil:
			return nil, err
		}
		was := problemStates(f.Snapshot)
		for k, st := range open {
			if was[k] != st {
				out[k] = Start{Time: newer.Time}
				delete(open, k)
			}
		}
		newer = f
	}
	return out, nil
}

// older is the frame before f: the branch's head for a daemon's newest
// status not on it yet, else f's parent.
func older(ctx context.Context, h History, f Frame) (Frame, error) {
	if f.Commit == "" {
		return h.Head(ctx)
	}
	return h.Parent(ctx, f.Commit)
}

// finish gives the problems still open the start at, and returns out.
func finish(out map[ProblemKey]Start, open map[ProblemKey]string, at time.Time, before bool) map[ProblemKey]Start {
	for k := range open {
		out[k] = Start{Time: at, Before: before}
	}
	return out
}

// sinceMark is a Start as the pages show it.
type sinceMark struct {
	// At is the start (RFC 3339, data-since or data-since-before).
	At     string
	Before bool
	// Text reads "for 3h12m, since 14:02 UTC" ("for over …, since before
	// …" when Before).
	Text string
}

// markOf is st as of now.
func markOf(st Start, now time.Time) *sinceMark {
	at := st.Time.UTC()
	clock := at.Format("15:04 UTC")
	if y, m, d := now.UTC().Date(); at.Year() != y || at.Month() != m || at.Day() != d {
		clock = at.Format("2006-01-02 15:04 UTC")
	}
	over, before := "", ""
	if st.Before {
		over, before = "over ", "before "
	}
	return &sinceMark{At: at.Format(time.RFC3339), Before: st.Before,
		Text: "for " + over + span(now.Sub(at)) + ", since " + before + clock}
}

// span is a duration as a person reads it: 45s, 12m, 3h12m, 4d3h.
func span(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// sinceOf is the Starts of the problems of the frame a request shows:
// none under time travel (the walk follows the head only) or before the
// walk for the head is done (which this starts if needed).
func (s *Server) sinceOf(v view) map[ProblemKey]Start {
	if v.TimeTravel() {
		return nil
	}
	st, ok := s.since.lookup(v.Frame)
	if !ok {
		s.since.kick()
	}
	return st
}

// markProblems gives the fleet page's problems their start, where known
// (a failing health check has none).
func markProblems(ps []problem, st map[ProblemKey]Start, now time.Time) {
	for i, p := range ps {
		if p.Check != "" {
			continue
		}
		if start, ok := st[ProblemKey{p.Cluster, p.Profile}]; ok {
			ps[i].Since = markOf(start, now)
		}
	}
}

// clusterMarks are the starts of a cluster's problems, by profile (""
// for the cluster unreachable).
func clusterMarks(cluster string, st map[ProblemKey]Start, now time.Time) map[string]*sinceMark {
	var out map[string]*sinceMark
	for k, start := range st {
		if k.Cluster == cluster {
			if out == nil {
				out = map[string]*sinceMark{}
			}
			out[k.Profile] = markOf(start, now)
		}
	}
	return out
}
