package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/regatta-dev/regatta/spec"
)

// CycleError is a dependsOn cycle among the profiles of one cluster.
type CycleError struct {
	// Cycle lists the profiles in order, the first repeated at the end.
	Cycle []string
}

func (e *CycleError) Error() string {
	return "dependency cycle: " + strings.Join(e.Cycle, " -> ")
}

// Waves sorts profiles into waves by dependsOn: every profile's
// dependencies are in earlier waves, and profiles of one wave are
// independent, in name order. Dependencies on profiles outside the given set
// are ignored here (the caller reports them as missing for the cluster).
func Waves(profiles []*spec.Profile) ([][]*spec.Profile, error) {
	byName := make(map[string]*spec.Profile, len(profiles))
	for _, p := range profiles {
		byName[p.Metadata.Name] = p
	}
	indegree := make(map[string]int, len(profiles))
	dependents := map[string][]string{}
	for _, p := range profiles {
		for _, d := range p.Spec.DependsOn {
			if _, ok := byName[d]; ok {
				indegree[p.Metadata.Name]++
				dependents[d] = append(dependents[d], p.Metadata.Name)
			}
		}
	}
	var waves [][]*spec.Profile
	var ready []string
	for _, p := range profiles {
		if indegree[p.Metadata.Name] == 0 {
			ready = append(ready, p.Metadata.Name)
		}
	}
	done := 0
	for len(ready) > 0 {
		sort.Strings(ready)
		wave := make([]*spec.Profile, len(ready))
		var next []string
		for i, name := range ready {
			wave[i] = byName[name]
			for _, dep := range dependents[name] {
				if indegree[dep]--; indegree[dep] == 0 {
					next = append(next, dep)
				}
			}
		}
		waves, ready, done = append(waves, wave), next, done+len(wave)
	}
	if done < len(profiles) {
		return nil, findCycle(byName, indegree)
	}
	return waves, nil
}

// findCycle walks dependsOn edges among the profiles left with unmet
// dependencies until one repeats.
func findCycle(byName map[string]*spec.Profile, indegree map[string]int) *CycleError {
	var start string
	for _, name := range sortedKeys(indegree) {
		if indegree[name] > 0 {
			start = name
			break
		}
	}
	seen := map[string]int{}
	var path []string
	for cur := start; ; {
		if i, ok := seen[cur]; ok {
			return &CycleError{Cycle: append(path[i:], cur)}
		}
		seen[cur] = len(path)
		path = append(path, cur)
		cur = firstBlocked(byName[cur], byName, indegree)
	}
}

func firstBlocked(p *spec.Profile, byName map[string]*spec.Profile, indegree map[string]int) string {
	for _, d := range p.Spec.DependsOn {
		if _, ok := byName[d]; ok && indegree[d] > 0 {
			return d
		}
	}
	panic(fmt.Sprintf("plan: profile %s has unmet dependencies but none blocked", p.Metadata.Name))
}
