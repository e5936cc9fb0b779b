package reconciler

import (
	"context"
	"time"

	"github.com/regatta-dev/regatta/render/oci"
	"github.com/regatta-dev/regatta/spec"
)

// ociArtifact is an OCI add-on source that moves without a commit: a tag
// or a semver range of a repository.
type ociArtifact struct{ url, tag, semver string }

// movingArtifacts lists the moving artifacts of repo's profiles, each
// with the shortest interval its add-ons give it.
func movingArtifacts(repo *spec.Repository) map[ociArtifact]time.Duration {
	out := map[ociArtifact]time.Duration{}
	for _, p := range repo.Profiles {
		for _, a := range p.Spec.Addons {
			if a.OCI == nil || a.OCI.Digest != "" {
				continue
			}
			every, _ := time.ParseDuration(a.OCI.Interval) // validated when loading
			if every <= 0 {
				every = oci.DefaultInterval
			}
			k := ociArtifact{a.OCI.URL, a.OCI.Tag, a.OCI.Semver}
			if d, ok := out[k]; !ok || every < d {
				out[k] = every
			}
		}
	}
	return out
}

// usesAny reports whether one of p's add-ons reads one of arts.
func usesAny(p *spec.Profile, arts map[ociArtifact]bool) bool {
	for _, a := range p.Spec.Addons {
		if a.OCI != nil && a.OCI.Digest == "" && arts[ociArtifact{a.OCI.URL, a.OCI.Tag, a.OCI.Semver}] {
			return true
		}
	}
	return false
}

// ociSchedule is when each moving artifact is next due.
type ociSchedule struct{ next map[ociArtifact]time.Time }

// due follows the artifacts of every (one new to it is due one interval
// from now, one gone is dropped) and returns those due at now, each then
// due again one interval later, and when the next one is due (zero when
// there is none).
func (s *ociSchedule) due(every map[ociArtifact]time.Duration, now time.Time) ([]ociArtifact, time.Time) {
	var due []ociArtifact
	var next time.Time
	for a := range s.next {
		if _, ok := every[a]; !ok {
			delete(s.next, a)
		}
	}
	for a, d := range every {
		at, ok := s.next[a]
		switch {
		case !ok:
			at = now.Add(d)
		case !at.After(now):
			due = append(due, a)
			at = now.Add(d)
		}
		s.next[a] = at
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return due, next
}

// ociUsers lists the clusters of rev that one of the profiles reading
// one of arts matches (by the labels last classified).
func (d *Daemon) ociUsers(rev *revision, arts []ociArtifact) []string {
	want := map[ociArtifact]bool{}
	for _, a := range arts {
		want[a] = true
	}
	var profiles []*spec.Profile
	for _, p := range rev.repo.Profiles {
		if usesAny(p, want) {
			profiles = append(profiles, p)
		}
	}
	var out []string
	for _, c := range rev.repo.Clusters {
		labels := d.r.knownLabels(c)
		for _, p := range profiles {
			if p.Matches(c.Metadata.Name, labels) {
				out = append(out, c.Metadata.Name)
				break
			}
		}
	}
	return out
}

// followOCI resolves each moving artifact of the revision in force again
// as its interval comes due, once for the whole fleet, and queues the
// clusters using it when its digest moved: a tag moved or a version
// pushed reaches the clusters without a commit and without the drift
// interval. It runs for the life of Run's session.
func (s *session) followOCI(ctx context.Context) {
	sched := ociSchedule{next: map[ociArtifact]time.Time{}}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		rev := s.d.r.current()
		var every map[ociArtifact]time.Duration
		if rev != nil {
			every = movingArtifacts(rev.repo)
		}
		due, next := sched.due(every, time.Now())
		s.refreshDue(ctx, rev, due)
		wait := time.Hour // nothing to follow: a new revision wakes this up
		if !next.IsZero() {
			wait = time.Until(next)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-s.stopCh:
			return
		case <-s.ociWake:
		case <-timer.C:
		}
	}
}

// refreshDue resolves the artifacts due again and queues the clusters of
// those that moved.
func (s *session) refreshDue(ctx context.Context, rev *revision, due []ociArtifact) {
	var moved []ociArtifact
	for _, a := range due {
		m, err := s.d.r.opts.Renderer.RefreshOCI(ctx, a.url, a.tag, a.semver)
		if err != nil {
			s.d.r.log.Warn("cannot resolve an OCI artifact again; the passes of its clusters retry", "url", a.url, "tag", a.tag, "semver", a.semver, "error", err)
		}
		if m {
			moved = append(moved, a)
		}
	}
	if len(moved) == 0 {
		return
	}
	names := s.d.ociUsers(rev, moved)
	for _, a := range moved {
		s.d.r.log.Info("OCI artifact due and moved; queueing its clusters", "url", a.url, "tag", a.tag, "semver", a.semver, "clusters", len(names))
	}
	s.queue(names, false)
}

// revisionChanged wakes followOCI: the revision in force may read other
// artifacts.
func (s *session) revisionChanged() {
	if s.ociWake == nil {
		return // RunOnce: nothing follows artifacts
	}
	select {
	case s.ociWake <- struct{}{}:
	default:
	}
}
