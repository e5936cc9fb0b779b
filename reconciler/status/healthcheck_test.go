package status

import (
	"strings"
	"testing"
)

// TestHealthChecksForTenant: a tenant's page shows its own alerts' health
// checks only, never the platform's or another tenant's.
func TestHealthChecksForTenant(t *testing.T) {
	c := ClusterStatus{Cluster: "c1", Reachable: true,
		Profiles: []Profile{{Name: "team-web", Tenant: "team", State: StateApplied}},
		HealthChecks: []HealthCheck{
			{Alert: "platform-pods", Check: "crashing-pod", Degraded: 1},
			{Alert: "team/pods", Check: "mine", Tenant: "team"},
			{Alert: "other/pods", Check: "theirs", Tenant: "other"},
		}}
	got := ForTenant(Snapshot{Clusters: []ClusterStatus{c}}, "team")
	if len(got.Clusters) != 1 || len(got.Clusters[0].HealthChecks) != 1 || got.Clusters[0].HealthChecks[0].Check != "mine" {
		t.Fatalf("tenant team sees %+v", got.Clusters)
	}
	if len(c.HealthChecks) != 3 {
		t.Fatalf("the record itself changed: %+v", c.HealthChecks)
	}
}

// TestHealthCheckTextsBounded: a script's messages and errors are texts
// of the record, cut to MaxText in the file and not in the daemon's copy.
func TestHealthCheckTextsBounded(t *testing.T) {
	long := strings.Repeat("x", MaxText+10)
	c := ClusterStatus{Cluster: "c1", HealthChecks: []HealthCheck{{Alert: "a", Check: "k", Error: long,
		Resources: []ResourceHealth{{Object: "Pod a/b", Status: "Degraded", Message: long}}}}}
	if got := Overlong(c); len(got) != 2 || got[0].Field != "healthChecks[0].error" || got[1].Field != "healthChecks[0].resources[0].message" {
		t.Fatalf("overlong %+v", got)
	}
	b := boundCluster(c)
	if len(b.HealthChecks[0].Error) > MaxText+64 || len(b.HealthChecks[0].Resources[0].Message) > MaxText+64 {
		t.Fatalf("not bounded: %d", len(b.HealthChecks[0].Resources[0].Message))
	}
	if c.HealthChecks[0].Resources[0].Message != long {
		t.Fatal("the daemon's record was cut")
	}
}
