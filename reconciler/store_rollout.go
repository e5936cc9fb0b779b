package reconciler

import (
	"reflect"
	"sort"

	"github.com/regatta-dev/regatta/reconciler/rollout"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// setRollout records where a profile's rollout stands.
func (s *statusStore) setRollout(r status.RolloutStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.rollouts[r.Profile]; !ok || !reflect.DeepEqual(old, r) {
		s.rollouts[r.Profile] = r
		s.version++
	}
}

// rolloutList returns the rollouts by profile; s.mu is held.
func (s *statusStore) rolloutList() []status.RolloutStatus {
	if len(s.rollouts) == 0 {
		return nil
	}
	out := make([]status.RolloutStatus, 0, len(s.rollouts))
	for _, r := range s.rollouts {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Profile < out[j].Profile })
	return out
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

// pruneRollouts forgets the rollouts of profiles that are gone from the
// repository or no longer have spec.rollout.
func (d *Daemon) pruneRollouts(repo *spec.Repository) {
	keep := map[string]bool{}
	for _, p := range repo.Profiles {
		if p.Spec.Rollout != nil {
			keep[p.Metadata.Name] = true
		}
	}
	d.store.keepRollouts(keep)
	ro := d.r.rollouts
	ro.mu.Lock()
	defer ro.mu.Unlock()
	for name, pr := range ro.profiles {
		if !keep[name] {
			pr.stopTimer()
			delete(ro.profiles, name)
		}
	}
}

func (s *statusStore) keepRollouts(keep map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version += dropAbsent(s.rollouts, keep)
}
