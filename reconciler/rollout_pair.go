package reconciler

import (
	"context"
	"fmt"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/reconciler/rollout"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// rolloutPick is what one pair renders from: the revision in force, or,
// for a cluster its profile's rollout has not reached, the revision the
// pair last applied (pinned). skip, when set, is the pair's record when
// nothing is to be applied at all.
type rolloutPick struct {
	rev     *revision
	prof    *spec.Profile
	rolling bool
	pinned  bool
	skip    *status.Profile
	// reason, when set, is the message of a pinned pair's record.
	reason string
	// fp is the fingerprint of the rollout this pass belongs to: the
	// pass reads and reports only that rollout's state, not a newer one's
	// started meanwhile.
	fp string
}

// pick decides what the pair of prof renders from on this cluster.
func (p *clusterPass) pick(ctx context.Context, prof *spec.Profile) rolloutPick {
	cur := rolloutPick{rev: p.rev, prof: prof}
	if prof.Spec.Rollout == nil || prof.Spec.SyncMode == spec.SyncModeDryRun {
		return cur
	}
	cur.rolling = true
	ro, name, cluster := p.r.rollouts, prof.Metadata.Name, p.spec.Metadata.Name
	if p.stopped() { // a newer revision is in force: it decides, not this one
		return rolloutPick{skip: &status.Profile{Name: name, State: status.StateWaitingForRollout, Message: "superseded"}}
	}
	ro.observeResumed(ctx, p.rev, prof)
	fp := fingerprint(p.rev, prof)
	cur.fp = fp
	if ro.reached(name, fp, cluster) {
		return cur
	}
	inv, listed := p.inventoryOf(name)
	if listed && inv != nil && (inv.Revision == p.rev.sha || p.rendersSame(ctx, prof, inv)) {
		ro.markReached(name, fp, cluster) // nothing for the rollout to bring here
		return cur
	}
	if ro.sharded {
		return p.withFP(p.shardedPin(ctx, prof, inv, listed), fp)
	}
	if listed && ro.admit(prof, fp, cluster, p.r.members(p.rev, prof), p.rev.repo.RolloutControl(name)) {
		return cur
	}
	return p.withFP(p.pinned(ctx, prof, inv, listed), fp)
}

// withFP sets the fingerprint of the pass's rollout on a pick.
func (p *clusterPass) withFP(pk rolloutPick, fp string) rolloutPick {
	pk.fp = fp
	return pk
}

// errShardedRollout is why a rollout does not advance with several
// replicas: a replica sees only the clusters it owns, so it could not
// keep maxUpdate, stage order or a halt across the fleet.
const errShardedRollout = "progressive rollouts do not advance with --replicas-mode shard (a replica sees only its own clusters); the pair keeps the revision it last applied"

// shardedPin keeps a rolling pair at what it last applied, as a pair the
// rollout has not reached, and says why in the pair's record.
func (p *clusterPass) shardedPin(ctx context.Context, prof *spec.Profile, inv *apply.Inventory, listed bool) rolloutPick {
	pk := p.pinned(ctx, prof, inv, listed)
	if pk.skip != nil {
		pk.skip.Message = errShardedRollout
	} else {
		pk.reason = errShardedRollout
	}
	p.log.Warn("rollout not advanced", "profile", prof.Metadata.Name, "reason", errShardedRollout)
	return pk
}

// pinned returns the pick of a pair the rollout has not reached: the
// profile as it was at the revision the pair last applied.
func (p *clusterPass) pinned(ctx context.Context, prof *spec.Profile, inv *apply.Inventory, listed bool) rolloutPick {
	name := prof.Metadata.Name
	wait := func(msg string) rolloutPick {
		return rolloutPick{rolling: true, pinned: true, skip: &status.Profile{Name: name, State: status.StateWaitingForRollout, Message: msg}}
	}
	switch {
	case !listed:
		return wait("the cluster's inventories could not be read; the rollout waits")
	case inv == nil || inv.Revision == "":
		return wait("the profile's rollout has not reached this cluster; nothing applied yet")
	}
	old, err := p.r.rollouts.loadRevision(ctx, inv.Revision)
	var oldProf *spec.Profile
	if err == nil {
		oldProf = old.repo.Profile(name)
	}
	if oldProf == nil {
		msg := fmt.Sprintf("the rollout has not reached this cluster and revision %s it last applied cannot be read (%v); nothing changed", status.ShortRevision(inv.Revision), err)
		return wait(msg)
	}
	return rolloutPick{rev: old, prof: oldProf, rolling: true, pinned: true}
}

// rendersSame reports whether the revision in force renders the pair as
// it is applied: the rollout has nothing to bring to this cluster.
func (p *clusterPass) rendersSame(ctx context.Context, prof *spec.Profile, inv *apply.Inventory) bool {
	res, err := p.r.opts.Renderer.Render(ctx, render.Request{FS: p.rev.tree, Revision: p.rev.sha, Profile: prof,
		Cluster: p.renderFacts(), TreeHash: treeHasher(p.rev.tree)})
	return err == nil && inv.RenderHash != "" && res.Hash == inv.RenderHash
}

// reportRollout records the pair's outcome in its profile's rollout and
// its rollout in the pair's record.
func (p *clusterPass) reportRollout(prof *spec.Profile, pick rolloutPick, s status.Profile) status.Profile {
	if !pick.rolling {
		return s
	}
	state := rollout.Pending
	if !pick.pinned {
		state = rolloutState(s.State)
	}
	if pick.reason != "" {
		s.Message = pick.reason
	}
	members := p.r.members(p.rev, prof)
	s.Rollout = p.r.rollouts.report(prof, pick.fp, p.spec.Metadata.Name, state, members, p.rev.repo.RolloutControl(prof.Metadata.Name))
	return s
}

// members returns the clusters of rev that prof selects, with their last
// known effective labels.
func (r *Reconciler) members(rev *revision, prof *spec.Profile) []rollout.Cluster {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []rollout.Cluster
	for _, c := range rev.repo.Clusters {
		k := r.known[c.Metadata.Name]
		labels, _ := plan.EffectiveLabels(c.Metadata.Labels, sortedClassified(k.classified))
		if prof.Matches(c.Metadata.Name, labels) {
			out = append(out, rollout.Cluster{Name: c.Metadata.Name, Labels: labels})
		}
	}
	return out
}
