package reconciler

import (
	"time"

	"github.com/regatta-dev/regatta/reconciler/rollout"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// markReached records that the rollout reached the cluster without an
// admission: the cluster already renders as the revision wants.
func (ro *rollouts) markReached(profile, fp, cluster string) {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	if pr := ro.profiles[profile]; pr != nil && pr.fp == fp {
		pr.pair(cluster).state = rollout.Updating
	}
}

// report sets a pair's rollout state; a change re-decides the rollout and
// wakes its waiting clusters. A pass of a rollout that a newer one
// replaced while it ran (fp differs) reports nothing: its outcome is not
// the newer revision's, and counting it would let the newer revision
// skip its stages on that cluster.
func (ro *rollouts) report(prof *spec.Profile, fp, cluster string, state rollout.State, members []rollout.Cluster, control *spec.RolloutControl) *status.PairRollout {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	pr := ro.profiles[prof.Metadata.Name]
	if pr == nil || pr.fp != fp {
		return nil
	}
	p := pr.pair(cluster)
	changed := p.state != state
	switch {
	case state == rollout.Done && p.state != rollout.Done:
		p.since = ro.now()
	case state != rollout.Done:
		p.since = time.Time{}
	}
	p.state = state
	d := pr.last
	if changed || len(d.Stages) == 0 {
		d = ro.decide(pr, prof, members, control)
	}
	if changed {
		in := pr.input(members)
		ro.wakeAll(pendingOf(in))
	}
	out := &status.PairRollout{Revision: pr.target, Stage: stageOfCluster(d, cluster), State: string(state)}
	if state == rollout.Pending || d.Halted {
		out.Reason = d.Reason
	}
	return out
}
