package ui

import (
	"net/http"
	"testing"

	"github.com/regatta-dev/regatta/ui/access"
)

// A tenant sees its own clusters and profiles only (status.ForTenant), and
// another tenant's cluster or profile answers 403 with the body an absent
// one gets, so that names do not leak.
func TestTenantSeesItsOwnOnly(t *testing.T) {
	_, _, ts := newTestServer(t, access.Viewer{Name: "alice", Tenants: []string{"team-a"}})
	body := mustGet(t, ts, "/")
	has(t, "team-a's fleet page", body, `<tr data-cluster="prod-1"`, `<tr data-cluster="prod-2"`, `<td data-profile="web"`)
	hasNot(t, "team-a's fleet page", body, `data-cluster="stage-1"`, `data-profile="kyverno"`, `data-profile="billing"`, `billing`)
	body = mustGet(t, ts, "/clusters/prod-1")
	has(t, "team-a's view of prod-1", body, `<tr data-profile="web"`)
	hasNot(t, "team-a's view of prod-1", body, `kyverno`, `data-health-check`, "coredns") // the platform's alert is not the tenant's
	body = mustGet(t, ts, "/profiles/web")
	has(t, "team-a's web profile", body, `<section id="rollout"`, `<p id="next-step">`)

	var bodies []string
	for _, path := range []string{"/clusters/stage-1", "/clusters/absent", "/profiles/billing", "/profiles/kyverno", "/profiles/absent"} {
		code, body := get(t, ts, path)
		if code != http.StatusForbidden {
			t.Errorf("team-a GET %s: %d, want 403", path, code)
		}
		hasNot(t, path, body, "stage-1", "billing", "kyverno", "absent")
		bodies = append(bodies, body)
	}
	if bodies[0] != bodies[1] || bodies[2] != bodies[3] || bodies[3] != bodies[4] {
		t.Error("a forbidden and an absent name got different 403 pages")
	}
	body = mustGet(t, ts, "/events")
	hasNot(t, "team-a's events", body, "billing-db-1")
	body = mustGet(t, ts, "/revisions")
	has(t, "team-a's revisions", body, `data-arrival="prod-1"`)
	hasNot(t, "team-a's revisions", body, `data-arrival="stage-1"`, "records written") // the fleet's activity is not the tenant's
}

// A viewer of two tenants sees both tenants' pairs merged.
func TestTwoTenantsMerged(t *testing.T) {
	_, _, ts := newTestServer(t, access.Viewer{Tenants: []string{"team-a", "team-b"}})
	body := mustGet(t, ts, "/")
	has(t, "two tenants' fleet page", body, `<tr data-cluster="prod-1"`, `<tr data-cluster="stage-1"`, `<td data-profile="billing"`, `<td data-profile="web"`)
	hasNot(t, "two tenants' fleet page", body, `data-profile="kyverno"`)
	mustGet(t, ts, "/profiles/billing")
	mustGet(t, ts, "/profiles/web")
}

// The zero Viewer (no gate put one in the context) sees nothing.
func TestZeroViewerSeesNothing(t *testing.T) {
	_, _, ts := newTestServer(t, access.Viewer{})
	body := mustGet(t, ts, "/")
	hasNot(t, "zero viewer's fleet page", body, `<tr data-cluster`, "prod-1", "kyverno", "apply failed")
	for _, path := range []string{"/clusters/prod-1", "/profiles/web"} {
		if code, _ := get(t, ts, path); code != http.StatusForbidden {
			t.Errorf("zero viewer GET %s: %d, want 403", path, code)
		}
	}
}
