package render

// EventData is what an event profile's templates see of its event, as
// .Event: the instance's deterministic name, the cluster where the event
// happened, and the matching resource (one instance per resource) or
// resources (one instance for all), as Kubernetes objects in their JSON
// form (.Event.Resource.metadata.name).
type EventData struct {
	// Name is unique per instance of a (profile, cluster) pair and stable
	// across renders: name the instance's objects with it.
	Name string
	// SourceCluster is the cluster where the resources are.
	SourceCluster string
	Resource      map[string]any
	Resources     []any
}

// eventData is the template data of .Event; zero for a profile without an
// event trigger.
type eventData struct {
	Name          string
	SourceCluster string
	Resource      map[string]any
	Resources     []any
}

func eventDataOf(e *EventData) eventData {
	if e == nil {
		return eventData{}
	}
	return eventData{Name: e.Name, SourceCluster: e.SourceCluster, Resource: e.Resource, Resources: e.Resources}
}

// eventField follows .Event paths for the read analysis (see dataField).
func eventField(e eventData, path []string) (any, int, bool) {
	if len(path) == 1 {
		return e, 1, true
	}
	switch path[1] {
	case "Name":
		return e.Name, 2, true
	case "SourceCluster":
		return e.SourceCluster, 2, true
	case "Resource":
		return e.Resource, 2, true
	case "Resources":
		return e.Resources, 2, true
	}
	return nil, 1, false
}

// copyEvent copies the event's objects: sprig's set and merge change maps
// in place, and the objects are the watch cache's.
func copyEvent(e eventData) eventData {
	e.Resource, _ = deepCopyValue(e.Resource).(map[string]any)
	e.Resources, _ = deepCopyValue(e.Resources).([]any)
	return e
}
