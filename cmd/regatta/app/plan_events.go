package app

import "github.com/regatta-dev/regatta/reconciler/status"

// eventInstances are the instances of an event profile the status branch
// records on a cluster, which plan re-renders at both revisions.
func (pf planFacts) eventInstances(cluster, profile string) []status.EventInstance {
	for _, p := range pf.status[cluster].Profiles {
		if p.Name == profile {
			return p.EventInstances
		}
	}
	return nil
}
