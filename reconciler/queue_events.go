package reconciler

import (
	"sort"

	"github.com/regatta-dev/regatta/spec"
)

// onClusterEvent is the event watches' notification: the resources of an event
// source on a cluster may have changed. It queues the clusters whose event
// profiles read that source there, and no other.
func (d *Daemon) onClusterEvent(s *session) func(cluster, source string) {
	return func(cluster, source string) {
		rev := d.r.current()
		if rev == nil {
			return
		}
		for _, name := range d.eventDestinations(rev, cluster, source) {
			s.q.addUrgent(name)
		}
	}
}

// eventDestinations lists the clusters that receive instances of source's
// events on cluster.
func (d *Daemon) eventDestinations(rev *revision, cluster, source string) []string {
	set := map[string]bool{}
	for _, prof := range rev.repo.Profiles {
		t := prof.Spec.EventTrigger
		if t == nil || t.EventSourceName != source {
			continue
		}
		if !t.CrossCluster() {
			set[cluster] = true
			continue
		}
		for _, c := range rev.repo.Clusters {
			if prof.Matches(c.Metadata.Name, d.r.knownLabels(c)) {
				set[c.Metadata.Name] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// retainEventWatches stops the event watches a new revision in force no
// longer needs.
func (d *Daemon) retainEventWatches(repo *spec.Repository) {
	used := map[string]bool{}
	for _, p := range repo.Profiles {
		if t := p.Spec.EventTrigger; t != nil {
			used[t.EventSourceName] = true
		}
	}
	d.r.events.Retain(func(cluster, source string) bool {
		return used[source] && repo.Cluster(cluster) != nil
	})
}
