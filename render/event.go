package render

import (
	"encoding/json"
	"math"
)

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

// eventDataOf is the template data of e: a copy of its objects whose
// numbers are as in an unstructured object, whatever decoded them (JSON
// and YAML decoders give float64; a watch int64; the status branch int).
func eventDataOf(e *EventData) eventData {
	if e == nil {
		return eventData{}
	}
	res, _ := jsonNumbers(e.Resource).(map[string]any)
	list, _ := jsonNumbers(e.Resources).([]any)
	return eventData{
		Name:          e.Name,
		SourceCluster: e.SourceCluster,
		Resource:      res,
		Resources:     list,
	}
}

// jsonNumbers copies the maps and lists of v, turning integral numbers
// into int64 and the others into float64, so that templates compare
// them with constants (eq .port 443) as Kubernetes' unstructured objects
// and Sveltos' templates let them.
func jsonNumbers(v any) any { return copyTree(v, jsonNumber) }

// jsonNumber is v as int64 when it is a whole number within int64,
// float64 when it is another number, and v itself when not a number.
// The numbers are those of JSON and YAML decoders: float64, int64,
// json.Number (UseNumber), int and uint64 (go.yaml.in/yaml/v3).
func jsonNumber(v any) any {
	switch n := v.(type) {
	case float64:
		return wholeOr(n)
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i
		}
		if f, err := n.Float64(); err == nil {
			return wholeOr(f)
		}
	case int:
		return int64(n)
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n)
		}
		return float64(n)
	}
	return v
}

// wholeOr is f as int64 when it is a whole number int64 holds exactly.
func wholeOr(f float64) any {
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return int64(f)
	}
	return f
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
