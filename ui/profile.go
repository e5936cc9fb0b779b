package ui

import (
	"fmt"
	"net/http"
	"slices"
	"sort"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// profileBody is the profile page's content.
type profileBody struct {
	Name     string
	Tenant   string
	Clusters []profileCluster
	Counts   []stateCount
	// DependsOn are the profiles this one waits for; Dependents those
	// that wait for it (fleet.yaml's dependsOn, both directions).
	DependsOn, Dependents []string
	Rollout               *status.RolloutStatus
	// Next is the commit that lets a halted or waiting rollout go on.
	Next string
}

type profileCluster struct {
	Cluster, State, Revision, Message string
	// Stage and RolloutState are where the pair stands in the rollout.
	Stage, RolloutState string
}

func (s *Server) serveProfile(w http.ResponseWriter, r *http.Request) {
	v, err := s.viewOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	name := r.PathValue("name")
	body := profilePage(v.Snapshot, name)
	// a tenant sees the profiles of its pairs and rollouts; a dependency
	// it only names (status.ForTenant keeps its own dependsOn) is not its
	if len(body.Clusters) == 0 && body.Rollout == nil && (!v.WholeFleet() || len(body.DependsOn)+len(body.Dependents) == 0) {
		s.forbidden(w, r, v, "profile")
		return
	}
	s.render(w, r, http.StatusOK, "profile", pageData{Title: "profile " + text(name), View: v, Body: body})
}

// profilePage gathers a profile's clusters (problems first), its
// dependencies and its rollout.
func profilePage(s status.Snapshot, name string) profileBody {
	b := profileBody{Name: name}
	var all []status.ClusterStatus
	for _, c := range s.Clusters {
		for _, p := range c.Profiles {
			if p.Name == name {
				b.Tenant = p.Tenant
				all = append(all, status.ClusterStatus{Cluster: c.Cluster, Reachable: c.Reachable, Profiles: []status.Profile{p}})
				pc := profileCluster{Cluster: c.Cluster, State: p.State, Revision: p.Revision, Message: pairMessage(p)}
				if p.Rollout != nil {
					pc.Stage, pc.RolloutState = p.Rollout.Stage, p.Rollout.State
				}
				b.Clusters = append(b.Clusters, pc)
			}
		}
	}
	sort.SliceStable(b.Clusters, func(i, j int) bool { return b.Clusters[i].needsLook() && !b.Clusters[j].needsLook() })
	b.Counts = summary(all)
	for _, d := range s.Fleet.DependsOn {
		if d.Profile == name {
			b.DependsOn = append(b.DependsOn, d.DependsOn...)
		}
		if slices.Contains(d.DependsOn, name) {
			b.Dependents = append(b.Dependents, d.Profile)
		}
	}
	for i := range s.Fleet.Rollouts {
		if s.Fleet.Rollouts[i].Profile == name {
			b.Rollout = &s.Fleet.Rollouts[i]
			b.Next = nextStep(*b.Rollout)
		}
	}
	return b
}

// stageProgress is the rollout's current stage's progress; Halted when
// it halted.
func stageProgress(r status.RolloutStatus) string {
	if r.Halted {
		return "Halted"
	}
	for _, st := range r.Stages {
		if st.Name == r.Stage {
			return st.Progress
		}
	}
	return ""
}

// nextStep is the commit a person makes so that the rollout goes on, in
// the words of regatta status and the notifications: a revert (or a fix
// forward) for a halted rollout, the approval file for a stage awaiting
// approval, the pause to lift.
func nextStep(r status.RolloutStatus) string {
	switch stageProgress(r) {
	case "Halted":
		return fmt.Sprintf("revert: git revert %s (or fix forward in a new commit); either starts a new rollout of %s", r.Revision, r.Profile)
	case "AwaitingApproval":
		return fmt.Sprintf("approve: commit rollouts/%s.yaml with spec.approvals: [{stage: %s, revision: %s}]", r.Profile, r.Stage, r.Revision)
	case "Paused":
		return fmt.Sprintf("resume: set spec.paused: false in rollouts/%s.yaml (or delete it) in a new commit", r.Profile)
	}
	return ""
}

// needsLook: the pair fails, or failed its rollout stage (the canary
// that halted it).
func (c profileCluster) needsLook() bool {
	return failing(c.State) || c.RolloutState == status.StateFailed
}
