package diff

import (
	"sort"

	"github.com/regatta-dev/regatta/reconciler/rollout"
	"github.com/regatta-dev/regatta/spec"
)

// RolloutPlan is the order in which a profile's rollout takes the change
// to the clusters it affects.
type RolloutPlan struct {
	Profile string      `json:"profile"`
	Stages  []StagePlan `json:"stages"`
	// MaxUpdate is the profile's cap ("" when none).
	MaxUpdate string `json:"maxUpdate,omitempty"`
}

// StagePlan is one stage of a RolloutPlan.
type StagePlan struct {
	Name     string   `json:"name"`
	Clusters []string `json:"clusters"`
	// MaxUpdate is how many of the stage's clusters update at once.
	MaxUpdate int    `json:"maxUpdate"`
	Soak      string `json:"soak,omitempty"`
	Approval  bool   `json:"approval,omitempty"`
}

// rollouts plans the rollout of every profile with spec.rollout at head
// whose pairs the change affects.
func (c *comparison) rollouts(entries []*entry) []RolloutPlan {
	affected := map[string][]rollout.Cluster{}
	for _, e := range entries {
		for _, p := range e.pairs {
			prof := c.head.Fleet.Profile(p.profile)
			if prof == nil || prof.Spec.Rollout == nil || !c.head.matched[e.cluster][p.profile] || (p.result == nil && p.change == ProfileUpdated) {
				continue
			}
			affected[p.profile] = append(affected[p.profile], rollout.Cluster{Name: e.cluster, Labels: c.head.facts[e.cluster].Labels})
		}
	}
	var out []RolloutPlan
	for name, clusters := range affected {
		out = append(out, planOf(c.head.Fleet.Profile(name), clusters))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Profile < out[j].Profile })
	return out
}

func planOf(prof *spec.Profile, clusters []rollout.Cluster) RolloutPlan {
	ro := prof.Spec.Rollout
	rp := RolloutPlan{Profile: prof.Metadata.Name}
	if ro.MaxUpdate != nil {
		rp.MaxUpdate = ro.MaxUpdate.String()
	}
	specs := map[string]spec.RolloutStage{}
	for _, s := range ro.Stages {
		specs[s.Name] = s
	}
	for _, s := range rollout.Plan(ro, clusters) {
		if len(s.Clusters) == 0 {
			continue
		}
		st := specs[s.Name]
		rp.Stages = append(rp.Stages, StagePlan{
			Name:      s.Name,
			Clusters:  s.Clusters,
			MaxUpdate: min(s.MaxUpdate, ro.MaxUpdate.Of(len(clusters))),
			Soak:      st.Soak,
			Approval:  st.Approval,
		})
	}
	return rp
}
