package status

import (
	"sort"
	"strings"
)

// What an event record leaves out of a resource. Secret values never go
// into Git; status and the fields every write changes would make the
// status branch commit on every heartbeat of a watched Node without
// anything deployed changing.
var (
	omittedTop      = []string{"status"}
	omittedSecret   = []string{"data", "stringData"}
	omittedMetadata = []string{"managedFields", "resourceVersion", "generation", "selfLink"}
)

// lastApplied is kubectl's annotation holding a copy of the object (and
// of a Secret's values).
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// NewEventRecord records an instance's input: its resource (one per
// resource) or resources (one for all), reduced, with the hash of the
// instance's rendering. The objects given are not changed.
func NewEventRecord(resource map[string]any, resources []any, renderHash string) *EventRecord {
	rec := &EventRecord{Format: EventRecordFormat, RenderHash: renderHash}
	omitted := map[string]bool{}
	if resource != nil {
		rec.Resource = reduce(resource, omitted)
		rec.ResourceRef = refOf(resource)
	}
	for _, r := range resources {
		if m, ok := r.(map[string]any); ok {
			rec.Resources = append(rec.Resources, reduce(m, omitted))
		}
	}
	for f := range omitted {
		rec.Omitted = append(rec.Omitted, f)
	}
	sort.Strings(rec.Omitted)
	return rec
}

// reduce copies the top level and metadata of o without the omitted
// fields, noting each one it drops; deeper values are shared, not copied.
func reduce(o map[string]any, omitted map[string]bool) map[string]any {
	out := make(map[string]any, len(o))
	for k, v := range o {
		out[k] = v
	}
	drop := omittedTop
	if o["kind"] == "Secret" && o["apiVersion"] == "v1" {
		drop = append(append([]string(nil), omittedTop...), omittedSecret...)
	}
	for _, f := range drop {
		if _, ok := out[f]; ok {
			delete(out, f)
			omitted[f] = true
		}
	}
	if md, ok := o["metadata"].(map[string]any); ok {
		out["metadata"] = reduceMetadata(md, omitted)
	}
	return out
}

func reduceMetadata(md map[string]any, omitted map[string]bool) map[string]any {
	out := make(map[string]any, len(md))
	for k, v := range md {
		out[k] = v
	}
	for _, f := range omittedMetadata {
		if _, ok := out[f]; ok {
			delete(out, f)
			omitted["metadata."+f] = true
		}
	}
	if a, ok := md["annotations"].(map[string]any); ok {
		if _, ok := a[lastApplied]; ok {
			kept := make(map[string]any, len(a))
			for k, v := range a {
				if k != lastApplied {
					kept[k] = v
				}
			}
			out["annotations"] = kept
			omitted["metadata.annotations."+lastApplied] = true
		}
	}
	return out
}

func refOf(o map[string]any) *ResourceRef {
	md, _ := o["metadata"].(map[string]any)
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	return &ResourceRef{
		APIVersion: str(o, "apiVersion"),
		Kind:       str(o, "kind"),
		Namespace:  str(md, "namespace"),
		Name:       str(md, "name"),
	}
}

// String is Kind/namespace/name (Kind/name when cluster-scoped).
func (r ResourceRef) String() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// Replayable reports whether plan can render the instance from the record:
// a record of a format this version reads, with its resource or resources.
func (i EventInstance) Replayable() bool {
	e := i.Event
	return e != nil && e.Format >= 1 && e.Format <= EventRecordFormat && (e.Resource != nil || len(e.Resources) > 0)
}

// OmittedText lists the omitted fields for a message.
func (r *EventRecord) OmittedText() string { return strings.Join(r.Omitted, ", ") }
