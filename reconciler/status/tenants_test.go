package status

import (
	"strings"
	"testing"
)

func TestTenantPages(t *testing.T) {
	s := Snapshot{Fleet: Fleet{SourceRevision: "abcdef123456"}, Clusters: []ClusterStatus{
		{Cluster: "a", Reachable: true, Profiles: []Profile{{Name: "platform", State: StateApplied}, {Name: "t1-app", Tenant: "t1", State: StateFailed, Error: &Error{File: "tenants/t1/x.yaml", Line: 3, Message: "refused"}}}},
		{Cluster: "b", Reachable: true, Profiles: []Profile{{Name: "t2-app", Tenant: "t2", State: StateApplied}}},
	}}
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := string(files["status/tenants/t1.md"]), string(files["status/tenants/t2.md"])
	if !strings.Contains(p1, "# Status of tenant t1") || !strings.Contains(p1, "tenants/t1/x.yaml:3") ||
		strings.Contains(p1, "platform") || strings.Contains(p1, "t2-app") || strings.Contains(p1, "| b |") {
		t.Errorf("t1 page:\n%s", p1)
	}
	if !strings.Contains(p2, "t2-app") || strings.Contains(p2, "t1-app") {
		t.Errorf("t2 page:\n%s", p2)
	}
	if len(files) != 6 { // fleet, two clusters, the dashboard, two tenants
		t.Errorf("%d files", len(files))
	}
}
