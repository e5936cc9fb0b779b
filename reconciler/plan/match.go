package plan

import (
	"github.com/regatta-dev/regatta/spec"
)

// Cluster is what matching needs to know of one cluster.
type Cluster struct {
	Name   string
	Labels map[string]string // effective labels
}

// Assignment is the profiles one cluster gets, sorted into dependsOn waves.
type Assignment struct {
	Cluster string
	Waves   [][]*spec.Profile
	// Missing maps a matched profile to the dependencies that do not
	// select this cluster: such a profile waits (WaitingForDependency).
	Missing map[string][]string
	// Err is a dependsOn cycle among the matched profiles.
	Err error
}

// Profiles returns the assignment's profiles in apply order.
func (a Assignment) Profiles() []*spec.Profile {
	var out []*spec.Profile
	for _, w := range a.Waves {
		out = append(out, w...)
	}
	return out
}

// Match returns which profiles select the cluster, and in which order.
func Match(profiles []*spec.Profile, c Cluster) Assignment {
	var matched []*spec.Profile
	names := map[string]bool{}
	for _, p := range profiles {
		if p.Matches(c.Name, c.Labels) {
			matched = append(matched, p)
			names[p.Metadata.Name] = true
		}
	}
	a := Assignment{Cluster: c.Name}
	for _, p := range matched {
		for _, d := range p.Spec.DependsOn {
			if !names[d] {
				if a.Missing == nil {
					a.Missing = map[string][]string{}
				}
				a.Missing[p.Metadata.Name] = append(a.Missing[p.Metadata.Name], d)
			}
		}
	}
	a.Waves, a.Err = Waves(matched)
	return a
}

// MatchAll matches every cluster; the result is in the order of clusters.
func MatchAll(profiles []*spec.Profile, clusters []Cluster) []Assignment {
	out := make([]Assignment, len(clusters))
	for i, c := range clusters {
		out[i] = Match(profiles, c)
	}
	return out
}
