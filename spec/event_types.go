package spec

import (
	"io/fs"
	"sort"

	"k8s.io/apimachinery/pkg/labels"
)

// KindEventSource is the kind of events/<name>.yaml.
const KindEventSource = "EventSource"

// EventsDir holds the EventSource documents.
const EventsDir = "events"

// DefaultMaxInstances caps the event instances of one (profile, cluster)
// pair when eventTrigger.maxInstances is not set.
const DefaultMaxInstances = 500

// EventSource selects resources inside clusters whose presence deploys an
// event profile's add-ons, Sveltos style: events/<name>.yaml.
type EventSource struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta      `yaml:"metadata"`
	Spec     EventSourceSpec `yaml:"spec"`

	Source Source `yaml:"-"`
}

// EventSourceSpec is the body of an EventSource. A resource is part of the
// event when a resource selector selects it (kind, namespace, label
// filters, and its evaluate() when set); with aggregatedSelection, the
// script sees every selected resource at once and decides whether they
// all are an event (hs.matching) or none is.
type EventSourceSpec struct {
	ResourceSelectors []ResourceSelector `yaml:"resourceSelectors"`
	// AggregatedSelection is a Lua script whose evaluate() sees every
	// selected resource in the global `resources`.
	AggregatedSelection string `yaml:"aggregatedSelection,omitempty"`
}

// EventTrigger makes a profile react to an event source: its add-ons are
// templates rendered with the event's resources (.Event.Resource or
// .Event.Resources) and deployed while the event lasts.
type EventTrigger struct {
	// EventSourceName names an EventSource of events/.
	EventSourceName string `yaml:"eventSourceName"`
	// OneForEvent renders one instance per matching resource; false
	// renders one instance for all the resources of a source cluster.
	OneForEvent bool `yaml:"oneForEvent,omitempty"`
	// SourceClusterSelector selects the clusters watched; default: the
	// profile's own clusters (clusterSelector, clusterRefs).
	SourceClusterSelector *LabelSelector `yaml:"sourceClusterSelector,omitempty"`
	// DestinationClusterSelector selects the clusters the add-ons go to,
	// each receiving the instances of every source cluster; default: the
	// cluster where the event happened.
	DestinationClusterSelector *LabelSelector `yaml:"destinationClusterSelector,omitempty"`
	// MaxInstances caps the instances of one (profile, cluster) pair;
	// default DefaultMaxInstances. Over the cap, the pair is Failed and
	// nothing of it changes.
	MaxInstances int `yaml:"maxInstances,omitempty"`

	// source is the compiled source selector (nil: the profile's own).
	source labels.Selector
}

// EventSource returns the event source with the given name, or nil.
func (r *Repository) EventSource(name string) *EventSource {
	for _, e := range r.EventSources {
		if e.Metadata.Name == name {
			return e
		}
	}
	return nil
}

// IsEventProfile reports whether the profile reacts to an event source.
func (p *Profile) IsEventProfile() bool { return p.Spec.EventTrigger != nil }

// WatchesCluster reports whether an event profile watches the cluster
// with the given name and effective labels: sourceClusterSelector when
// set, else the profile's clusterSelector and clusterRefs. It must be
// called on a profile returned by Load.
func (p *Profile) WatchesCluster(cluster string, lbls map[string]string) bool {
	t := p.Spec.EventTrigger
	if t == nil {
		return false
	}
	if t.source != nil {
		return t.source.Matches(labels.Set(lbls))
	}
	for _, r := range p.Spec.ClusterRefs {
		if r == cluster {
			return true
		}
	}
	return p.ownSelector != nil && p.ownSelector.Matches(labels.Set(lbls))
}

// CrossCluster reports whether the add-ons go to other clusters than the
// one where the event happened (destinationClusterSelector is set).
func (t *EventTrigger) CrossCluster() bool { return t.DestinationClusterSelector != nil }

// Cap returns the instance cap, defaulted.
func (t *EventTrigger) Cap() int {
	if t.MaxInstances <= 0 {
		return DefaultMaxInstances
	}
	return t.MaxInstances
}

// loadEventSources reads events/<name>.yaml, sorted by name.
func loadEventSources(fsys fs.FS, repo *Repository, diags *Diagnostics) {
	for _, f := range listYAML(fsys, EventsDir, diags) {
		e := &EventSource{}
		if loadDocument(fsys, f, KindEventSource, e, &e.Source, diags) {
			repo.EventSources = append(repo.EventSources, e)
		} else {
			repo.markUnloaded(KindEventSource, e.Metadata.Name, f)
		}
	}
	sort.Slice(repo.EventSources, func(i, j int) bool {
		return repo.EventSources[i].Metadata.Name < repo.EventSources[j].Metadata.Name
	})
}
