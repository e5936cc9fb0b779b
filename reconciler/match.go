package reconciler

import (
	"sort"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/spec"
)

// driftDetected returns the names of the assignment's profiles that
// correct drift (event profiles' instances join the watches as they apply).
func driftDetected(a plan.Assignment) []string {
	var out []string
	for _, wave := range a.Waves {
		for _, prof := range wave {
			if prof.Spec.SyncMode == spec.SyncModeContinuousWithDriftDetection && !prof.IsEventProfile() {
				out = append(out, prof.Metadata.Name)
			}
		}
	}
	return out
}

func matchedProfiles(repo *spec.Repository, labels map[string]string, cluster string) []*spec.Profile {
	var out []*spec.Profile
	for _, prof := range repo.Profiles {
		if prof.Matches(cluster, labels) {
			out = append(out, prof)
		}
	}
	return out
}

// withdrawOrder returns the inventories to withdraw: profiles deleted from
// the repository first, then the others with dependents before their
// dependencies.
func withdrawOrder(repo *spec.Repository, invs []*apply.Inventory, matched map[string]bool) []*apply.Inventory {
	var deleted, known []*apply.Inventory
	var profiles []*spec.Profile
	byName := map[string]*apply.Inventory{}
	for _, inv := range invs {
		if matched[inv.Profile] {
			continue
		}
		if prof := repo.Profile(inv.Profile); prof != nil {
			profiles = append(profiles, prof)
			byName[inv.Profile] = inv
		} else {
			deleted = append(deleted, inv)
		}
	}
	sort.Slice(deleted, func(i, j int) bool { return deleted[i].Profile < deleted[j].Profile })
	waves, _ := plan.Waves(profiles) // acyclic: the revision validated
	for i := len(waves) - 1; i >= 0; i-- {
		for _, prof := range waves[i] {
			known = append(known, byName[prof.Metadata.Name])
		}
	}
	return append(deleted, known...)
}

func sortedClassified(m map[string]plan.Classified) []plan.Classified {
	out := make([]plan.Classified, 0, len(m))
	for _, c := range m {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Classifier < out[j].Classifier })
	return out
}
