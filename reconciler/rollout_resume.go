package reconciler

import (
	"context"

	"github.com/regatta-dev/regatta/reconciler/rollout"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// resumeFrom takes, from the status branch an earlier daemon wrote, the
// revision each profile's rollout was bringing (status/fleet.yaml
// rollouts[].revision), so that a restarted daemon continues those
// rollouts rather than starting them over at the revision in force; and,
// of a rollout that was halted, the clusters whose pair had failed at that
// revision, so that it stays halted until they are seen again.
func (ro *rollouts) resumeFrom(rs []status.RolloutStatus, records []status.ClusterStatus) {
	ro.resumeMu.Lock()
	defer ro.resumeMu.Unlock()
	ro.resume, ro.resumeFailed = map[string]string{}, map[string][]string{}
	for _, r := range rs {
		if r.Profile == "" || r.Revision == "" {
			continue
		}
		ro.resume[r.Profile] = r.Revision
		if r.Halted {
			ro.resumeFailed[r.Profile] = failedAt(records, r.Profile, r.Revision)
		}
	}
}

// failedAt names the clusters whose pair of profile failed at revision.
func failedAt(records []status.ClusterStatus, profile, revision string) []string {
	var out []string
	for _, c := range records {
		for _, p := range c.Profiles {
			if p.Name == profile && p.Revision == revision && rolloutState(p.State) == rollout.Failed {
				out = append(out, c.Cluster)
			}
		}
	}
	return out
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
	if !ok {
		ro.observe(rev, prof)
		return
	}
	defer ro.keepHalted(name, sha)
	if sha == rev.sha {
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

// keepHalted marks, once the rollout of a profile is known after a
// restart, the pairs that had failed at its revision before the restart as
// failed again, unless seen since: a rollout halted before a restart stays
// halted, and no cluster more gets the revision that failed. ro.resumeMu is
// held.
func (ro *rollouts) keepHalted(name, sha string) {
	failed, ok := ro.resumeFailed[name]
	if !ok {
		return
	}
	ro.mu.Lock()
	defer ro.mu.Unlock()
	pr := ro.profiles[name]
	if pr == nil || pr.target != sha {
		if _, again := ro.resume[name]; !again {
			delete(ro.resumeFailed, name) // a new rollout
		}
		return
	}
	delete(ro.resumeFailed, name)
	for _, c := range failed {
		if pr.pairs[c] == nil {
			pr.pairs[c] = &pairRollout{state: rollout.Failed, since: ro.now()}
		}
	}
}
