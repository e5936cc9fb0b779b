package reconciler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/regatta-dev/regatta/reconciler/metrics"
	"github.com/regatta-dev/regatta/reconciler/rollout"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// rollouts tracks the rollout of every profile with spec.rollout: which
// revision it brings, where each of its clusters stands, and asks
// reconciler/rollout which clusters may take the revision. A cluster the
// rollout has not reached keeps the profile as rendered at the revision
// it last applied (its inventory says which); other profiles move on.
type rollouts struct {
	mu       sync.Mutex
	profiles map[string]*profileRollout
	// load reads an older revision (for pinned pairs); set by the Daemon.
	load func(ctx context.Context, sha string) (*revision, error)
	// wake queues a cluster; set by the daemon's session (setWake).
	wake  atomic.Pointer[func(cluster string)]
	oldMu sync.Mutex
	old   map[string]*revision // older revisions read for pinned pairs
	now   func() time.Time
	// record receives every decision's status; set by the Daemon.
	record  func(status.RolloutStatus)
	metrics *metrics.Metrics
	log     *slog.Logger
	// sharded is set when replicas share the fleet: rollouts then do not
	// advance (errShardedRollout).
	sharded bool
	// resume is, by profile, the revision an earlier daemon's rollout
	// brought (from the status branch), until the profile is first seen.
	resumeMu sync.Mutex
	resume   map[string]string
	// resumeFailed are, by profile, the clusters whose pair had failed at
	// the revision of a rollout halted before the restart.
	resumeFailed map[string][]string
}

// profileRollout is one profile's rollout of one revision.
type profileRollout struct {
	target string // the revision the rollout brings
	fp     string // the profile's inputs at target
	pairs  map[string]*pairRollout
	last   rollout.Decision
	timer  *time.Timer
}

type pairRollout struct {
	state   rollout.State
	since   time.Time
	touched bool
}

func newRollouts(m *metrics.Metrics, log *slog.Logger, now func() time.Time) *rollouts {
	return &rollouts{profiles: map[string]*profileRollout{}, old: map[string]*revision{}, now: now, metrics: m, log: log}
}

// fingerprint identifies what a profile renders from at a revision: its
// spec (without spec.rollout) and every shared folder of the tree (all but
// clusters/, profiles/, classifiers/, rollouts/ and status/). A commit that
// changes it starts a new rollout; clusters it leaves unchanged pass
// through at once (see gate).
func fingerprint(rev *revision, prof *spec.Profile) string {
	h := sha256.New()
	s := prof.Spec
	s.Rollout = nil
	b, _ := json.Marshal(s)
	h.Write(b)
	entries, _ := fs.ReadDir(rev.tree, ".")
	for _, e := range entries {
		switch e.Name() {
		case spec.ClustersDir, spec.ProfilesDir, spec.ClassifiersDir, spec.RolloutsDir, status.Dir:
			continue
		}
		th, ok := treeHash(rev.tree, e.Name())
		if !ok {
			th = rev.sha // cannot tell: every revision is new
		}
		h.Write([]byte(e.Name() + "\x00" + th + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// observe starts a new rollout of prof when rev changes what it renders
// from. Clusters a halted rollout had reached are marked touched: the new
// revision (a fix, a revert) reaches them first. A rollout that was still
// going well marks none: the next change goes through the stages from the
// first, or it would reach production before its canary.
func (ro *rollouts) observe(rev *revision, prof *spec.Profile) *profileRollout {
	name := prof.Metadata.Name
	fp := fingerprint(rev, prof)
	ro.mu.Lock()
	defer ro.mu.Unlock()
	old := ro.profiles[name]
	if old != nil && old.fp == fp {
		return old
	}
	pr := &profileRollout{target: rev.sha, fp: fp, pairs: map[string]*pairRollout{}}
	if old != nil {
		old.stopTimer()
		for c, p := range old.pairs {
			touched := p.touched || (old.last.Halted && p.state != rollout.Pending)
			pr.pairs[c] = &pairRollout{state: rollout.Pending, touched: touched}
		}
	}
	ro.profiles[name] = pr
	ro.metrics.Rollout.Started.WithLabelValues(name).Inc()
	ro.log.Info("rollout started", "profile", name, "revision", status.ShortRevision(rev.sha))
	return pr
}

func (pr *profileRollout) stopTimer() {
	if pr.timer != nil {
		pr.timer.Stop()
	}
}

func (pr *profileRollout) pair(cluster string) *pairRollout {
	p := pr.pairs[cluster]
	if p == nil {
		p = &pairRollout{state: rollout.Pending}
		pr.pairs[cluster] = p
	}
	return p
}

// reached reports whether the rollout of fingerprint fp reached the
// cluster already (false once a newer rollout replaced it).
func (ro *rollouts) reached(profile, fp, cluster string) bool {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	pr := ro.profiles[profile]
	return pr != nil && pr.fp == fp && pr.pairs[cluster] != nil && pr.pairs[cluster].state != rollout.Pending
}

// admit decides whether the cluster may take the rollout's revision now;
// an admitted cluster counts as updating from here on.
func (ro *rollouts) admit(prof *spec.Profile, fp, cluster string, members []rollout.Cluster, control *spec.RolloutControl) bool {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	pr := ro.profiles[prof.Metadata.Name]
	if pr == nil || pr.fp != fp {
		return false
	}
	d := ro.decide(pr, prof, members, control)
	if !d.Allowed(rollout.Input{Clusters: pr.input(members)}, cluster) {
		return false
	}
	pr.pair(cluster).state = rollout.Updating
	ro.metrics.Rollout.Admitted.WithLabelValues(prof.Metadata.Name).Inc()
	ro.log.Info("rollout admits cluster", "profile", prof.Metadata.Name, "cluster", cluster,
		"revision", status.ShortRevision(pr.target), "stage", stageOfCluster(d, cluster))
	return true
}

// input merges the known pair states into the profile's clusters.
func (pr *profileRollout) input(members []rollout.Cluster) []rollout.Cluster {
	out := make([]rollout.Cluster, len(members))
	for i, m := range members {
		if p := pr.pairs[m.Name]; p != nil {
			m.State, m.Since, m.Touched = p.state, p.since, p.touched
		} else {
			m.State = rollout.Pending
		}
		out[i] = m
	}
	return out
}

// decide runs the decision, remembers it, exports it and arms a timer for
// when it changes by itself (a soak ends, a window opens).
func (ro *rollouts) decide(pr *profileRollout, prof *spec.Profile, members []rollout.Cluster, control *spec.RolloutControl) rollout.Decision {
	in := rollout.Input{Rollout: prof.Spec.Rollout, Control: control, Revision: pr.target, Clusters: pr.input(members), Now: ro.now()}
	d := rollout.Decide(in)
	pr.last = d
	counts := map[string]int{}
	for _, c := range in.Clusters {
		counts[string(c.State)]++
	}
	ro.metrics.Rollout.SetRolloutCounts(prof.Metadata.Name, counts, d.Halted)
	if ro.record != nil {
		ro.record(rolloutStatus(prof.Metadata.Name, pr.target, d))
	}
	pr.stopTimer()
	if !d.Recheck.IsZero() {
		pending := pendingOf(in.Clusters)
		// By the rollout's clock, which windows and soaks are read from.
		pr.timer = time.AfterFunc(d.Recheck.Sub(in.Now)+10*time.Millisecond, func() { ro.wakeAll(pending) })
	}
	return d
}

func pendingOf(cs []rollout.Cluster) []string {
	var out []string
	for _, c := range cs {
		if c.State == rollout.Pending {
			out = append(out, c.Name)
		}
	}
	return out
}

func (ro *rollouts) wakeAll(names []string) {
	wake := ro.wake.Load()
	if wake == nil {
		return
	}
	for _, n := range names {
		(*wake)(n)
	}
}

func (ro *rollouts) setWake(fn func(cluster string)) { ro.wake.Store(&fn) }

func stageOfCluster(d rollout.Decision, cluster string) string {
	for _, s := range d.Stages {
		for _, c := range s.Clusters {
			if c == cluster {
				return s.Name
			}
		}
	}
	return ""
}

// loadRevision reads an older revision for pinned pairs.
func (ro *rollouts) loadRevision(ctx context.Context, sha string) (*revision, error) {
	if ro.load == nil {
		return nil, fmt.Errorf("no repository to read revision %s from", status.ShortRevision(sha))
	}
	return ro.load(ctx, sha)
}

func rolloutState(pairState string) rollout.State {
	switch pairState {
	case status.StateApplied, status.StateDryRun, status.StatePaused:
		return rollout.Done
	case status.StateFailed, status.StateConflict:
		return rollout.Failed
	}
	return rollout.Updating
}

// rolloutStatus is the status record of a decision.
func rolloutStatus(profile, revision string, d rollout.Decision) status.RolloutStatus {
	out := status.RolloutStatus{
		Profile:  profile,
		Revision: revision,
		Stage:    d.Stage,
		Halted:   d.Halted,
		Complete: d.Complete,
		Reason:   d.Reason,
	}
	for _, st := range d.Stages {
		out.Stages = append(out.Stages, status.StageStatus{
			Name:     st.Name,
			Progress: st.Progress,
			Done:     st.Done,
			Updating: st.Updating,
			Waiting:  st.Waiting,
			Failed:   st.Failed,
		})
	}
	return out
}

// keepOnly forgets the rollouts of the profiles keep does not name.
func (ro *rollouts) keepOnly(keep map[string]bool) {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	for name, pr := range ro.profiles {
		if !keep[name] {
			pr.stopTimer()
			delete(ro.profiles, name)
		}
	}
}
