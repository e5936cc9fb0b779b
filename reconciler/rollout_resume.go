package reconciler

import (
	"context"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// resumeFrom takes, from the status branch an earlier daemon wrote, the
// revision each profile's rollout was bringing (status/fleet.yaml
// rollouts[].revision), so that a restarted daemon continues those
// rollouts rather than starting them over at the revision in force.
func (ro *rollouts) resumeFrom(rs []status.RolloutStatus) {
	ro.resumeMu.Lock()
	defer ro.resumeMu.Unlock()
	ro.resume = map[string]string{}
	for _, r := range rs {
		if r.Profile != "" && r.Revision != "" {
			ro.resume[r.Profile] = r.Revision
		}
	}
}

// observeResumed is observe for a pass of rev. The first time a profile is
// seen after a restart, the rollout an earlier daemon recorded for it is
// continued when its revision renders the profile from the same inputs as
// rev (only rollouts/, cluster files or other profiles changed since): the
// rollout keeps that revision, which approvals name. Otherwise, or when
// that revision cannot be read, the rollout starts at rev.
func (ro *rollouts) observeResumed(ctx context.Context, rev *revision, prof *spec.Profile) {
	name := prof.Metadata.Name
	ro.resumeMu.Lock()
	defer ro.resumeMu.Unlock()
	sha, ok := ro.resume[name]
	if !ok || sha == rev.sha {
		delete(ro.resume, name)
		ro.observe(rev, prof)
		return
	}
	old, err := ro.loadRevision(ctx, sha)
	if err != nil && ctx.Err() != nil {
		ro.observe(rev, prof) // cut short: the next pass tries again
		return
	}
	delete(ro.resume, name)
	var oldProf *spec.Profile
	if err == nil {
		oldProf = old.repo.Profile(name)
	}
	if oldProf == nil || fingerprint(old, oldProf) != fingerprint(rev, prof) {
		ro.log.Info("rollout not resumed: the profile changed since the earlier daemon's rollout", "profile", name,
			"recorded", status.ShortRevision(sha), "revision", status.ShortRevision(rev.sha), "error", err)
		ro.observe(rev, prof)
		return
	}
	ro.observeAt(rev, prof, sha)
}

// observeAt starts a rollout of prof, as rendered at rev, that brings
// target: the revision which began it before a restart. It does nothing
// when a rollout of the same inputs is known already.
func (ro *rollouts) observeAt(rev *revision, prof *spec.Profile, target string) {
	name := prof.Metadata.Name
	fp := fingerprint(rev, prof)
	ro.mu.Lock()
	defer ro.mu.Unlock()
	if old := ro.profiles[name]; old != nil && old.fp == fp {
		return
	}
	ro.profiles[name] = &profileRollout{target: target, fp: fp, pairs: map[string]*pairRollout{}}
	ro.log.Info("rollout resumed", "profile", name, "revision", status.ShortRevision(target),
		"inForce", status.ShortRevision(rev.sha))
}
