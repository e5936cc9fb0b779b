package reconciler

import (
	"testing"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// checkEventRecords checks what the status records of each instance for
// regatta plan: its resource as the templates saw it, without the fields
// every write changes, with the rendering's hash.
func checkEventRecords(t *testing.T, rec status.Profile) {
	t.Helper()
	for _, in := range rec.EventInstances {
		e := in.Event
		if !in.Replayable() || e.Format != status.EventRecordFormat || e.RenderHash == "" || e.ResourceRef == nil {
			t.Errorf("instance %s: record %+v", in.Name, e)
			continue
		}
		if got := e.ResourceRef.String(); got != in.Resource {
			t.Errorf("instance %s: resourceRef %s, want %s", in.Name, got, in.Resource)
		}
		md, _ := e.Resource["metadata"].(map[string]any)
		spec, _ := e.Resource["spec"].(map[string]any)
		if md["name"] == nil || spec["ports"] == nil || md["resourceVersion"] != nil || md["managedFields"] != nil || e.Resource["status"] != nil {
			t.Errorf("instance %s: recorded resource %v", in.Name, e.Resource)
		}
	}
}
