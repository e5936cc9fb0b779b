package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/ui/access"
)

var (
	rev1 = strings.Repeat("1", 40)
	rev2 = strings.Repeat("2", 40)
	com1 = "aaaa" + strings.Repeat("0", 36)
	com2 = "bbbb" + strings.Repeat("0", 36)
	t1   = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	t2   = time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
)

const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)>` + "\x1b[31mred\u202e"

// testFleet is a small fleet with a failing pair, an unreachable cluster,
// a pulled one, two tenants, a halted rollout, one awaiting approval, a
// dependency and an event instance.
func testFleet(rev string) status.Snapshot {
	s := snapshotOf(rev,
		status.ClusterStatus{Cluster: "prod-1", SourceRevision: rev, Reachable: true, KubernetesVersion: "v1.37.2",
			Labels:           map[string]string{"env": "prod", "region": "eu"},
			ClassifierLabels: map[string]map[string]string{"geo": {"region": "eu"}},
			Profiles: []status.Profile{
				{Name: "kyverno", State: status.StateFailed, Revision: rev, Objects: 12, DriftCorrections: 3,
					Error: &status.Error{Object: "Deployment/kyverno/kyverno", File: "profiles/kyverno.yaml", Line: 14, Message: "apply failed"}},
				{Name: "web", Tenant: "team-a", State: status.StateApplied, Revision: rev, Objects: 4, Health: "Healthy",
					Artifacts: []status.Artifact{{Addon: "app", URL: "oci://registry.example/app", Digest: "sha256:" + strings.Repeat("ab", 32)}}},
			}},
		status.ClusterStatus{Cluster: "prod-2", SourceRevision: rev, Error: "dial tcp 10.0.0.2:6443: connection refused",
			Labels: map[string]string{"env": "prod"},
			Profiles: []status.Profile{{Name: "web", Tenant: "team-a", State: status.StateApplied, Revision: rev,
				Rollout: &status.PairRollout{Revision: rev, Stage: "canary", State: status.StateFailed, Reason: "unhealthy past healthTimeout"}}}},
		status.ClusterStatus{Cluster: "stage-1", SourceRevision: rev, Reachable: true, Mode: "pull", Owner: "regatta-1",
			Labels: map[string]string{"env": "stage"},
			Profiles: []status.Profile{{Name: "billing", Tenant: "team-b", State: status.StateApplied, Revision: rev, Message: hostile,
				EventInstances: []status.EventInstance{{Name: "billing-db-1", SourceCluster: "prod-1", Resource: "v1/Service/db/main", Objects: []string{"ConfigMap/db/main"}}}}}},
	)
	s.Fleet.Rollouts = []status.RolloutStatus{
		{Profile: "web", Revision: rev, Stage: "canary", Halted: true, Reason: "prod-2 failed",
			Stages: []status.StageStatus{{Name: "canary", Progress: "Halted", Done: 1, Failed: 1}, {Name: "rest", Progress: "Waiting", Waiting: 3}}},
		{Profile: "billing", Revision: rev, Stage: "prod", Reason: "stage prod waits for approval",
			Stages: []status.StageStatus{{Name: "stage", Progress: "Done", Done: 1}, {Name: "prod", Progress: "AwaitingApproval", Waiting: 2}}},
	}
	s.Fleet.DependsOn = []status.ProfileDependency{{Profile: "web", DependsOn: []string{"kyverno"}}}
	s.Clusters[0].HealthChecks = []status.HealthCheck{{Alert: "platform-health", Check: "deployments", Objects: 9, Degraded: 2,
		Resources: []status.ResourceHealth{{Object: "Deployment kube-system/coredns", Status: "Degraded", Message: "0/2 replicas available"}}}}
	s.Clusters[2].HealthChecks = []status.HealthCheck{{Alert: "team-b/db", Check: "databases", Tenant: "team-b", Error: "checks/db.lua:3: attempt to index a nil value"}}
	return s
}

// newTestServer serves a Server over a history of two frames, each
// request seen by viewer.
func newTestServer(t *testing.T, viewer access.Viewer) (*Server, *memHistory, *httptest.Server) {
	t.Helper()
	h := &memHistory{}
	h.add(Frame{Commit: com1, Time: t1, Snapshot: testFleet(rev1)})
	h.add(Frame{Commit: com2, Time: t2, Snapshot: testFleet(rev2)})
	s := New(Options{History: h, Title: "test fleet"})
	t.Cleanup(s.Close)
	settle(t, s)
	ts := httptest.NewServer(asViewer(viewer, s.Handler()))
	t.Cleanup(ts.Close)
	return s, h, ts
}

// asViewer stands for the access gate: every request is seen by v.
func asViewer(v access.Viewer, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(access.WithViewer(r.Context(), v)))
	})
}

var fleetViewer = access.Viewer{Fleet: true}

func get(t *testing.T, ts *httptest.Server, path string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// mustGet fetches a page that must answer 200.
func mustGet(t *testing.T, ts *httptest.Server, path string) string {
	t.Helper()
	code, body := get(t, ts, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d, want 200:\n%s", path, code, body)
	}
	return body
}

// has asserts that body holds every one of the fragments.
func has(t *testing.T, what, body string, fragments ...string) {
	t.Helper()
	for _, f := range fragments {
		if !strings.Contains(body, f) {
			t.Errorf("%s lacks %q", what, f)
		}
	}
}

func hasNot(t *testing.T, what, body string, fragments ...string) {
	t.Helper()
	for _, f := range fragments {
		if strings.Contains(body, f) {
			t.Errorf("%s holds %q", what, f)
		}
	}
}

// attrs lists the values of an attribute in body, in order.
func attrs(body, attr string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<[a-z]+ `+attr+`="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestFleetPageContract(t *testing.T) {
	s, _, ts := newTestServer(t, fleetViewer)
	body := mustGet(t, ts, "/")
	has(t, "fleet page", body,
		"<title>fleet · test fleet</title>",
		`<main id="main" tabindex="-1" data-version="`+s.version()+`"`,
		`<div id="frame" data-commit="`+com2+`" data-at="2026-12-01T11:00:00Z"`,
		`<a class="skip" href="#main">`,
		`href="/revisions"`, `href="/events"`,
		`<section id="summary"`, `<li data-state="Failed">`, `<li data-state="Unreachable">`,
		`<section id="problems"`,
		`<li data-cluster="prod-1" data-profile="kyverno" data-state="Failed">`,
		`profiles/kyverno.yaml:14: Deployment/kyverno/kyverno: apply failed`,
		`<li data-cluster="prod-2" data-state="Unreachable">`,
		`<li data-cluster="prod-1" data-health-check="deployments" data-state="Degraded">`, `2 Degraded; first Deployment kube-system/coredns: 0/2 replicas available`,
		`<li data-cluster="stage-1" data-health-check="databases" data-state="CheckError">`, `checks/db.lua:3: attempt to index a nil value`,
		`<form id="filters" method="get" action="/"`, `name="q"`, `name="state"`, `name="label"`, `name="profile"`, `name="tenant"`,
		`<table id="matrix">`, `<td data-profile="kyverno" data-state="Failed"`,
		`<section id="rollouts"`, `<li data-profile="web" data-state="Halted">`, `<li data-profile="billing" data-state="AwaitingApproval">`,
		`<link rel="stylesheet" href="/-/static/ui.css?v=`+s.assets+`">`, `<script src="/-/static/ui.js?v=`+s.assets+`" defer></script>`,
	)
	hasNot(t, "fleet page of 3 clusters", body, `id="pages"`, `data-time-travel`)
	// problems first: the unreachable prod-2 and failing prod-1 before stage-1
	if rows := attrs(body, "data-cluster"); len(rows) < 3 || rows[len(rows)-1] != "stage-1" {
		t.Errorf("matrix rows %v: want the clusters with problems first", rows)
	}
	for _, p := range []string{"/-/static/ui.css", "/-/static/ui.js", "/-/healthz"} {
		mustGet(t, ts, p)
	}
}

func TestClusterPage(t *testing.T) {
	_, _, ts := newTestServer(t, fleetViewer)
	body := mustGet(t, ts, "/clusters/prod-1")
	has(t, "cluster page", body,
		"<title>cluster prod-1 · test fleet</title>",
		`<section id="labels"`,
		`<li data-label="env" data-source="cluster.yaml">`,
		`<li data-label="region" data-source="classifier:geo">`,
		`<section id="pairs"`,
		`<tr data-profile="kyverno" data-state="Failed">`,
		`<tr data-profile="web" data-state="Applied" data-tenant="team-a">`,
		`data-error-file="profiles/kyverno.yaml" data-error-line="14"`,
		`profiles/kyverno.yaml:14: Deployment/kyverno/kyverno: apply failed`,
		`push (a central daemon reconciles it)`, `v1.37.2`,
		`oci://registry.example/app`, `sha256:abababababab`,
		`<section id="health-checks"`, `<li data-health-check="deployments" data-alert="platform-health" data-degraded="2">`, `0/2 replicas available`,
	)
	body = mustGet(t, ts, "/clusters/stage-1")
	has(t, "pulled cluster page", body, `pull (its own agent`, `replica <code>regatta-1</code>`, `data-instance="billing-db-1"`)
	body = mustGet(t, ts, "/clusters/prod-2")
	has(t, "unreachable cluster page", body, `data-reachable="false"`, `connection refused`)

	code, body := get(t, ts, "/clusters/nope")
	if code != http.StatusNotFound {
		t.Errorf("absent cluster, whole-fleet viewer: %d, want 404", code)
	}
	has(t, "404 page", body, "<title>Not Found · test fleet</title>")
}

func TestProfilePage(t *testing.T) {
	_, _, ts := newTestServer(t, fleetViewer)
	body := mustGet(t, ts, "/profiles/web")
	has(t, "profile page", body,
		"<title>profile web · test fleet</title>",
		`<section id="clusters"`, `<li data-cluster="prod-1" data-state="Applied">`,
		`<li data-cluster="prod-2" data-state="Applied"><a href="/clusters/prod-2">prod-2</a> <span class="state s-Applied">Applied</span> <code>22222222</code> <span class="rollout" data-rollout-state="Failed">stage canary`,
		`<section id="dependsOn"`, `data-depends-on="kyverno"`,
		`<section id="rollout"`, `<li data-stage="canary" data-state="Halted">`, `<li data-stage="rest" data-state="Waiting">`,
		`<p id="next-step">`, `git revert `+rev2,
	)
	if strings.Index(body, `<li data-cluster="prod-2"`) > strings.Index(body, `<li data-cluster="prod-1"`) {
		t.Error("the canary that failed its stage is not listed first")
	}
	body = mustGet(t, ts, "/profiles/kyverno")
	has(t, "depended-on profile", body, `data-dependent="web"`, `<li data-cluster="prod-1" data-state="Failed">`)
	hasNot(t, "profile without rollout", body, `id="rollout"`, `id="next-step"`)
	body = mustGet(t, ts, "/profiles/billing")
	has(t, "profile awaiting approval", body, `<li data-stage="prod" data-state="AwaitingApproval">`,
		`approve: commit rollouts/billing.yaml with spec.approvals: [{stage: prod, revision: `+rev2+`}]`)
	if code, _ := get(t, ts, "/profiles/nope"); code != http.StatusNotFound {
		t.Errorf("absent profile, whole-fleet viewer: %d, want 404", code)
	}
}

func TestRevisionsAndEventsPages(t *testing.T) {
	_, _, ts := newTestServer(t, fleetViewer)
	body := mustGet(t, ts, "/revisions")
	has(t, "revisions page", body, "<title>revisions · test fleet</title>", `<ol id="timeline">`,
		`<li data-commit="`+com2+`" data-revision="`+rev2+`">`, `<li data-commit="`+com1+`" data-revision="`+rev1+`">`,
		`href="/?at=`+com1+`"`, `data-arrival="prod-1" data-revision="`+rev2+`"`)
	hasNot(t, "revisions of an unfolded history", body, `data-folded`)
	if got := attrs(body, "data-commit"); len(got) != 2 || got[0] != com2 || got[1] != com1 {
		t.Errorf("timeline commits %v: want newest first", got)
	}
	body = mustGet(t, ts, "/events")
	has(t, "events page", body, "<title>events · test fleet</title>", `<table id="instances">`,
		`<tr data-instance="billing-db-1" data-source="prod-1">`)
}

// A text a profile controls (a health message) holding markup and
// terminal escapes is shown as text: no element, no escape sequence.
func TestProfileTextIsInert(t *testing.T) {
	_, _, ts := newTestServer(t, fleetViewer)
	for _, path := range []string{"/clusters/stage-1", "/profiles/billing", "/?q=stage"} {
		body := mustGet(t, ts, path)
		hasNot(t, path, body, "<script>alert", "<img src=x", "\x1b", "\u202e")
		if path != "/?q=stage" {
			has(t, path, body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;red")
		}
		if n := strings.Count(body, "<script"); n != 1 {
			t.Errorf("%s: %d script elements, want only the UI's own", path, n)
		}
	}
}

func TestFragmentIsMainOnly(t *testing.T) {
	_, _, ts := newTestServer(t, fleetViewer)
	_, body := get(t, ts, "/clusters/prod-1", FragmentHeader, "main")
	if !strings.HasPrefix(body, `<main id="main"`) || !strings.HasSuffix(strings.TrimSpace(body), "</main>") {
		t.Errorf("fragment is not the main element alone:\n%.300s", body)
	}
	has(t, "fragment", body, `data-title="cluster prod-1 · test fleet"`, `<section id="pairs"`)
}

// The fleet page says why the newest revision is not in force (file and
// line), which tenants are refused, and the signature check's verdict; a
// tenant sees its own refusal only.
func TestFleetFacts(t *testing.T) {
	snap := testFleet(rev2)
	snap.Fleet.AppliedRevision = rev1
	snap.Fleet.Errors = []status.Error{{File: "profiles/web.yaml", Line: 7, Message: "spec.addons[0].kustomize.path: folder web does not exist"}}
	snap.Fleet.RefusedTenants = []status.RefusedTenant{
		{Tenant: "team-a", Errors: []status.Error{{File: "tenants/team-a/profiles/x.yaml", Line: 3, Message: "unknown field spec.foo"}}},
		{Tenant: "team-b", Errors: []status.Error{{File: "tenants/team-b/profiles/y.yaml", Line: 4, Message: "bad selector"}}},
	}
	snap.Fleet.Verification = &status.Verification{Mode: "head", Commit: rev2, Reason: "UnknownKey", Key: "SHA256:abc"}
	h := &memHistory{}
	h.add(Frame{Commit: com2, Time: t2, Snapshot: snap})
	s := New(Options{History: h})
	ts := httptest.NewServer(asViewer(fleetViewer, s.Handler()))
	defer ts.Close()
	body := mustGet(t, ts, "/")
	has(t, "fleet facts", body,
		`<code data-revision="`+rev2+`">22222222</code>`, `in force: <code data-applied="`+rev1+`">11111111</code>`,
		`<div class="alert" id="fleet-errors">`, `profiles/web.yaml:7: spec.addons[0].kustomize.path: folder web does not exist`,
		`data-refused-tenant="team-a"`, `tenants/team-a/profiles/x.yaml:3: unknown field spec.foo`, `data-refused-tenant="team-b"`,
		`<div class="alert" id="verification" data-accepted="false">`, `refused commit <code>22222222</code></strong>: UnknownKey`, `SHA256:abc`)

	tenant := httptest.NewServer(asViewer(access.Viewer{Tenants: []string{"team-a"}}, s.Handler()))
	defer tenant.Close()
	body = mustGet(t, tenant, "/")
	has(t, "team-a's fleet facts", body, `data-refused-tenant="team-a"`)
	hasNot(t, "team-a's fleet facts", body, `data-refused-tenant="team-b"`, "bad selector")
}
