package status

import (
	"strings"
	"testing"
)

func TestTenantPages(t *testing.T) {
	fleet := Fleet{
		SourceRevision: "abcdef123456",
		Rollouts:       []RolloutStatus{{Profile: "t2-app", Revision: "abcdef123456", Stage: "canary"}},
		DependsOn:      []ProfileDependency{{Profile: "t1-app", DependsOn: []string{"platform-base"}}, {Profile: "t2-app", DependsOn: []string{"t2-base"}}},
	}
	s := Snapshot{Fleet: fleet, Clusters: []ClusterStatus{
		{Cluster: "a", Reachable: true, Profiles: []Profile{{Name: "platform", State: StateApplied}, {Name: "t1-app", Tenant: "t1", State: StateFailed, Error: &Error{File: "tenants/t1/x.yaml", Line: 3, Message: "refused"}}}},
		{Cluster: "b", Reachable: true, Profiles: []Profile{{Name: "t2-app", Tenant: "t2", State: StateApplied}}},
	}}
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := string(files["status/tenants/t1.md"]), string(files["status/tenants/t2.md"])
	if !strings.Contains(p1, "# Status of tenant t1") || !strings.Contains(p1, "tenants/t1/x.yaml:3") ||
		strings.Contains(p1, "| platform |") || strings.Contains(p1, "t2-") || strings.Contains(p1, "| b |") ||
		!strings.Contains(p1, "p1 --> p0") || strings.Contains(p1, "## Rollouts") {
		t.Errorf("t1 page:\n%s", p1)
	}
	if !strings.Contains(p2, "t2-app") || strings.Contains(p2, "t1-app") || !strings.Contains(p2, "## Rollouts") {
		t.Errorf("t2 page:\n%s", p2)
	}
	if len(files) != 6 { // fleet, two clusters, the dashboard, two tenants
		t.Errorf("%d files", len(files))
	}
}
