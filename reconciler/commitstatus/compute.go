package commitstatus

import (
	"fmt"
	"strings"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// State is a commit status's state, in GitHub's words; each Host maps it
// to its own (GitLab running/success/failed, Bitbucket INPROGRESS/
// SUCCESSFUL/FAILED).
type State string

// The states a revision goes through.
const (
	Pending State = "pending"
	Success State = "success"
	Failure State = "failure"
)

// DefaultContext is the overall status's context (GitHub's "context",
// GitLab's "name", Bitbucket's "key").
const DefaultContext = "regatta/fleet"

// DefaultMaxDescription is GitHub's limit on a status description, the
// smallest of the hosts'.
const DefaultMaxDescription = 140

// Status is one commit status to set.
type Status struct {
	Context     string
	State       State
	Description string
	// TargetURL is the link the host shows beside the status (the fleet
	// dashboard); empty for none.
	TargetURL string
}

// Options shape what Compute says.
type Options struct {
	// Context names the overall status (default DefaultContext).
	Context string
	// Stages adds one status per stage of each rollout of the revision,
	// context "<Context's prefix>/rollout/<profile>/<stage>".
	Stages bool
	// TargetURL is set on every status.
	TargetURL string
	// MaxDescription truncates descriptions (default DefaultMaxDescription).
	MaxDescription int
}

func (o Options) withDefaults() Options {
	if o.Context == "" {
		o.Context = DefaultContext
	}
	if o.MaxDescription <= 0 {
		o.MaxDescription = DefaultMaxDescription
	}
	return o
}

// stagePrefix is the prefix of the per-stage contexts: "regatta/fleet"
// gives "regatta/rollout/".
func (o Options) stagePrefix() string {
	base, _, _ := strings.Cut(o.Context, "/")
	return base + "/rollout/"
}

// Compute says which statuses the revision the fleet follows
// (snap.Fleet.SourceRevision) should carry, and that revision. It returns
// no revision for a fleet that has seen none.
func Compute(snap status.Snapshot, o Options) (string, []Status) {
	o = o.withDefaults()
	rev := snap.Fleet.SourceRevision
	if rev == "" {
		return "", nil
	}
	out := []Status{overall(snap, rev, o)}
	if o.Stages {
		out = append(out, stages(snap.Fleet.Rollouts, rev, o)...)
	}
	return rev, out
}

// overall is the revision's one status for the whole fleet.
func overall(snap status.Snapshot, rev string, o Options) Status {
	st := Status{Context: o.Context, TargetURL: o.TargetURL}
	if f := snap.Fleet; len(f.Errors) > 0 && f.AppliedRevision != rev {
		st.State = Failure
		st.Description = truncate("revision kept out: "+errorText(f.Errors[0])+more(len(f.Errors)-1), o.MaxDescription)
		return st
	}
	t := tally(snap.Clusters, rev)
	t.rolloutProblems(snap.Fleet.Rollouts, rev)
	switch {
	case len(t.problems) > 0:
		st.State = Failure
		st.Description = fmt.Sprintf("%d failed: %s", t.failed, strings.Join(t.problems, "; ")) + more(t.failed-len(t.problems))
	case snap.Fleet.AppliedRevision != rev:
		st.State = Pending
		st.Description = "revision not in force yet"
	case t.pending > 0:
		st.State = Pending
		st.Description = fmt.Sprintf("%d/%d pairs applied", t.done, t.done+t.pending)
	default:
		st.State = Success
		st.Description = fmt.Sprintf("%s applied on %s", plural(t.done, "pair"), plural(len(snap.Clusters), "cluster"))
	}
	st.Description = truncate(st.Description, o.MaxDescription)
	return st
}

// maxProblems is how many errors a failure's description names.
const maxProblems = 3

// counts tallies the pairs of a revision.
type counts struct {
	done, pending, failed int
	problems              []string
}

func (t *counts) problem(s string) {
	t.failed++
	if len(t.problems) < maxProblems {
		t.problems = append(t.problems, s)
	}
}

// tally counts the pairs with the rule the daemon uses for Converged
// (reconciler/status_fleet.go, converged): a pair is done when Applied,
// DryRun, Paused or Withdrawn, and an unreachable cluster that is not
// paused is a failure. A reachable cluster not yet reconciled at rev has
// its pairs pending, also those Failed at an older revision (the newer
// one may fix them).
func tally(cs []status.ClusterStatus, rev string) *counts {
	t := &counts{}
	for i := range cs {
		c := &cs[i]
		if !c.Reachable && !c.Paused {
			t.problem(c.Cluster + ": unreachable" + suffix(c.Error))
			continue
		}
		behind := !c.Paused && c.SourceRevision != rev
		for j := range c.Profiles {
			t.pair(c.Cluster, &c.Profiles[j], behind)
		}
	}
	return t
}

func (t *counts) pair(cluster string, p *status.Profile, behind bool) {
	if behind {
		// Whatever it says is about an older revision.
		t.pending++
		return
	}
	switch p.State {
	case status.StateFailed, status.StateConflict:
		msg := p.Message
		if p.Error != nil {
			msg = errorText(*p.Error)
		}
		t.problem(cluster + "/" + p.Name + ": " + p.State + suffix(msg))
	case status.StateApplied, status.StateDryRun, status.StatePaused, status.StateWithdrawn:
		t.done++
	default:
		t.pending++
	}
}

// rolloutProblems counts a halted rollout of rev whose failed pairs the
// tally did not already name (a halt always has a reason).
func (t *counts) rolloutProblems(rs []status.RolloutStatus, rev string) {
	if t.failed > 0 {
		return
	}
	for _, r := range rs {
		if r.Revision == rev && r.Halted {
			t.problem("rollout " + r.Profile + " halted" + suffix(r.Reason))
		}
	}
}

// stages is one status per stage of each rollout of rev.
func stages(rs []status.RolloutStatus, rev string, o Options) []Status {
	var out []Status
	for _, r := range rs {
		if r.Revision != rev {
			continue
		}
		for _, s := range r.Stages {
			out = append(out, stageStatus(r, s, o))
		}
	}
	return out
}

func stageStatus(r status.RolloutStatus, s status.StageStatus, o Options) Status {
	total := s.Done + s.Updating + s.Waiting + s.Failed
	st := Status{Context: o.stagePrefix() + r.Profile + "/" + s.Name, TargetURL: o.TargetURL, State: Pending}
	desc := fmt.Sprintf("%d/%d applied", s.Done, total)
	switch {
	case s.Failed > 0 || (r.Halted && r.Stage == s.Name):
		st.State = Failure
		desc += fmt.Sprintf(", %d failed", s.Failed) + suffix(r.Reason)
	case s.Done == total:
		st.State = Success
	default:
		desc += ", " + s.Progress
	}
	st.Description = truncate(desc, o.MaxDescription)
	return st
}

func errorText(e status.Error) string {
	var where string
	switch {
	case e.File != "" && e.Line > 0:
		where = fmt.Sprintf("%s:%d: ", e.File, e.Line)
	case e.File != "":
		where = e.File + ": "
	case e.Object != "":
		where = e.Object + ": "
	}
	return where + firstLine(e.Message)
}

func suffix(msg string) string {
	if msg = firstLine(msg); msg == "" {
		return ""
	}
	return ": " + msg
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (+%d more)", n)
}

// truncate cuts s to at most n runes, ending it with "…" when cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
