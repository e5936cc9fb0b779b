package ui

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/ui/access"
)

var (
	comA = "cccc" + strings.Repeat("0", 36)
	comB = "dddd" + strings.Repeat("0", 36)
	tA   = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	tB   = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
)

// compareFleets are two frames with a change of every kind between them:
// a pair fails (stage-1/billing), one is fixed (prod-1/kyverno), a cluster
// becomes reachable (prod-2), a cluster and a pair are added (prod-3,
// prod-1/logging) and removed (old-1, prod-1/legacy), a pair's revision
// and objects change (prod-1/web), a pair's error holds markup
// (prod-2/web); of the fleet, an error appears, a
// refused tenant is accepted, rollouts halt, move on, start and end.
func compareFleets() (before, after status.Snapshot) {
	before = testFleet(rev1)
	before.Clusters[0].Profiles = append(before.Clusters[0].Profiles, status.Profile{Name: "legacy", State: status.StateApplied, Revision: rev1, Objects: 2})
	before.Clusters = append(before.Clusters, status.ClusterStatus{Cluster: "old-1", SourceRevision: rev1, Reachable: true,
		Profiles: []status.Profile{{Name: "web", Tenant: "team-a", State: status.StateApplied, Revision: rev1}}})
	before.Fleet.Rollouts = append(before.Fleet.Rollouts, status.RolloutStatus{Profile: "legacy", Revision: rev1, Complete: true})
	before.Fleet.RefusedTenants = []status.RefusedTenant{{Tenant: "team-b", Errors: []status.Error{{File: "tenants/team-b/p.yaml", Line: 2, Message: "bad"}}}}

	after = testFleet(rev1)
	after.Fleet.SourceRevision, after.Fleet.AppliedRevision = rev2, rev2
	after.Fleet.Errors = []status.Error{{File: "profiles/web.yaml", Line: 7, Message: "folder web does not exist"}}
	p1 := &after.Clusters[0]
	p1.Profiles[0].State, p1.Profiles[0].Error = status.StateApplied, nil
	p1.Profiles[1].Revision, p1.Profiles[1].Objects = rev2, 5
	p1.Profiles = append(p1.Profiles, status.Profile{Name: "logging", State: status.StateApplied, Revision: rev2, Objects: 3})
	after.Clusters[1].Reachable, after.Clusters[1].Error = true, ""
	after.Clusters[1].Profiles[0].Error = &status.Error{Message: hostile}
	after.Clusters[2].Profiles[0].State = status.StateConflict
	after.Clusters[2].Profiles[0].Error = &status.Error{Object: "ConfigMap/db/main", Message: "owned by another field manager"}
	after.Clusters = append(after.Clusters, status.ClusterStatus{Cluster: "prod-3", SourceRevision: rev2, Reachable: true,
		Profiles: []status.Profile{{Name: "web", Tenant: "team-a", State: status.StateApplied, Revision: rev2}}})
	after.Fleet.Rollouts = []status.RolloutStatus{
		{Profile: "web", Revision: rev2, Stage: "rest", Stages: []status.StageStatus{{Name: "canary", Progress: "Done"}, {Name: "rest", Progress: "Progressing"}}},
		{Profile: "logging", Revision: rev2, Stage: "all", Stages: []status.StageStatus{{Name: "all", Progress: "Progressing"}}},
		after.Fleet.Rollouts[1],
	}
	after.Fleet.Rollouts[2].Halted = true
	return before, after
}

func newCompareServer(t *testing.T, viewer access.Viewer) *httptest.Server {
	t.Helper()
	before, after := compareFleets()
	h := &memHistory{}
	h.add(Frame{Commit: comA, Time: tA, Snapshot: before})
	h.add(Frame{Commit: comB, Time: tB, Snapshot: after})
	ts := httptest.NewServer(asViewer(viewer, New(Options{History: h, Title: "test fleet"}).Handler()))
	t.Cleanup(ts.Close)
	return ts
}

var fleetRowRE = regexp.MustCompile(`<tr data-fleet="([^"]*)" data-name="[^"]*" data-change="([^"]*)">`)

var changeRowRE = regexp.MustCompile(`<tr data-cluster="([^"]*)" data-profile="([^"]*)" data-change="([^"]*)">`)

// changeRows lists a compare page's rows as cluster/profile:change.
func changeRows(body string) []string {
	var out []string
	for _, m := range changeRowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1]+"/"+m[2]+":"+m[3])
	}
	return out
}

// The compare page lists every kind of change, problems first, then
// fixes, then the rest, with before → after; and the fleet's own changes.
func TestComparePage(t *testing.T) {
	ts := newCompareServer(t, fleetViewer)
	for _, q := range []string{"from=" + comA + "&to=" + comB, "from=" + comA[:8], "from=" + url.QueryEscape(tA.Format(time.RFC3339)) + "&to=2026-12-02T10:30"} {
		body := mustGet(t, ts, "/compare?"+q)
		want := []string{
			"stage-1/billing:failed",
			"prod-1/kyverno:fixed", "prod-2/:fixed",
			"prod-1/logging:added", "prod-3/:added",
			"prod-1/legacy:removed", "old-1/:removed",
			"prod-1/web:changed", "prod-2/web:changed",
		}
		if got := changeRows(body); !slices.Equal(got, want) {
			t.Errorf("?%s: rows\n%v\nwant\n%v", q, got, want)
		}
		wantFleet := []string{"error:failed", "rollout:failed", "refused tenant:fixed", "rollout:fixed", "rollout:added", "rollout:removed"}
		var gotFleet []string
		for _, m := range fleetRowRE.FindAllStringSubmatch(body, -1) {
			gotFleet = append(gotFleet, m[1]+":"+m[2])
		}
		if !slices.Equal(gotFleet, wantFleet) {
			t.Errorf("?%s: fleet changes %v, want %v", q, gotFleet, wantFleet)
		}
		has(t, "compare ?"+q, body,
			"<title>compare cccc0000 → dddd0000 · test fleet</title>",
			`<section id="compare" data-from="`+comA+`" data-to="`+comB+`"`,
			`<tr data-side="from"><th scope="row">from</th><td><a href="/?at=`+comA+`"><code>cccc0000</code></a></td><td>2026-12-02 09:00:00 UTC</td><td><code>11111111</code></td>`,
			`<tr data-side="to"><th scope="row">to</th><td><a href="/?at=`+comB+`"><code>dddd0000</code></a></td><td>2026-12-02 10:00:00 UTC</td><td><code>22222222</code></td>`,
			`9 cluster and pair changes · <span data-count="failed">1 failed</span> · <span data-count="fixed">2 fixed</span>`,
			`state: <span class="before">Applied</span> → <span class="after">Conflict</span>`,
			`error: <span class="before">–</span> → <span class="after">ConfigMap/db/main: owned by another field manager</span>`,
			`error: <span class="before">profiles/kyverno.yaml:14: Deployment/kyverno/kyverno: apply failed</span> → <span class="after">–</span>`,
			`reachable: <span class="before">false</span> → <span class="after">true</span>`,
			`revision: <span class="before">11111111</span> → <span class="after">22222222</span></span>; <span data-field="objects">objects: <span class="before">4</span> → <span class="after">5</span>`,
			`<a href="/clusters/old-1?at=`+comA+`">old-1</a>`, `<a href="/clusters/prod-3?at=`+comB+`">prod-3</a>`,
			`<tr data-fleet="error" data-name="profiles/web.yaml:7: folder web does not exist" data-change="failed">`,
			`<tr data-fleet="refused tenant" data-name="team-b" data-change="fixed">`,
			`<tr data-fleet="rollout" data-name="web" data-change="fixed">`, `stage: <span class="before">canary</span> → <span class="after">rest</span>`,
			`state: <span class="before">Halted</span> → <span class="after">Progressing</span>`,
			`<tr data-fleet="rollout" data-name="billing" data-change="failed">`, `state: <span class="before">AwaitingApproval</span> → <span class="after">Halted</span>`,
			`<tr data-fleet="rollout" data-name="legacy" data-change="removed">`,
			`<tr data-fleet="rollout" data-name="logging" data-change="added">`, `revision: <span class="before">–</span> → <span class="after">22222222</span>`,
			`<span class="after">&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;red</span>`)
		hasNot(t, "compare ?"+q, body, "<script>alert", "<img src=x", "\x1b", "\u202e")
	}
	body := mustGet(t, ts, "/compare?from="+comA+"&to="+comB[:8])
	has(t, "compare with an explicit to", body, `data-time-travel="true"`, `<a href="/compare?from=`+comA+`">Back to now</a>`,
		`href="/revisions?at=dddd0000"`)
	body = mustGet(t, ts, "/compare?from="+comB)
	has(t, "a frame against itself", body, `<p id="no-changes">`)
	hasNot(t, "compare with the head", body, `data-time-travel`)
	hasNot(t, "a frame against itself", body, `<tr data-cluster=`, `<tr data-fleet=`)
}

// A tenant compares only what it may see: its own pairs, clusters and
// rollouts; not another tenant's refusal or the fleet's own profiles.
func TestCompareAsTenant(t *testing.T) {
	ts := newCompareServer(t, access.Viewer{Tenants: []string{"team-a"}})
	body := mustGet(t, ts, "/compare?from="+comA+"&to="+comB)
	want := []string{"prod-2/:fixed", "prod-3/:added", "old-1/:removed", "prod-1/web:changed", "prod-2/web:changed"}
	if got := changeRows(body); !slices.Equal(got, want) {
		t.Errorf("team-a's rows\n%v\nwant\n%v", got, want)
	}
	has(t, "team-a's compare", body, `<tr data-fleet="rollout" data-name="web" data-change="fixed">`)
	hasNot(t, "team-a's compare", body, "kyverno", "billing", "legacy", "logging", "stage-1", `data-name="team-b"`, "owned by another field manager")
}

// A bad from or to answers as a bad ?at= does: 400 for what is neither a
// time nor a commit, 404 for one the history lacks; the message names
// the parameter.
func TestCompareBadFromTo(t *testing.T) {
	ts := newCompareServer(t, fleetViewer)
	for q, want := range map[string]int{
		"":                                      http.StatusBadRequest,
		"to=" + comB:                            http.StatusBadRequest,
		"from=not-a-time":                       http.StatusBadRequest,
		"from=" + comA + "&to=not-a-time":       http.StatusBadRequest,
		"from=cafe0000":                         http.StatusNotFound,
		"from=" + comA + "&to=cafe0000":         http.StatusNotFound,
		"from=2020-01-01T00:00:00Z":             http.StatusNotFound,
		"from=" + comA + "&to=2020-01-01T00:00": http.StatusNotFound,
	} {
		code, body := get(t, ts, "/compare?"+q)
		if code != want {
			t.Errorf("?%s: %d, want %d\n%.400s", q, code, want, body)
			continue
		}
		param := "from"
		if strings.Contains(q, "&to=") {
			param = "to"
		}
		has(t, "?"+q, body, `<p id="error" data-code="`+fmt.Sprint(want)+`">`+param+`: `)
	}
}

// The revisions page links each commit to a comparison with the one
// before it and with now, and has a form for any two.
func TestRevisionsLinkToCompare(t *testing.T) {
	ts := newCompareServer(t, fleetViewer)
	body := mustGet(t, ts, "/revisions")
	has(t, "revisions page", body,
		`<a data-compare="previous" href="/compare?from=`+comA+`&amp;to=`+comB+`">compare with previous</a>`,
		`<a data-compare="head" href="/compare?from=`+comA+`">compare with now</a>`,
		`<form id="compare-form" method="get" action="/compare"`, `<input name="from" required`, `<input name="to"`)
	if n := strings.Count(body, `data-compare="previous"`); n != 1 {
		t.Errorf("%d compare-with-previous links, want 1 (the oldest commit has none)", n)
	}
	if n := strings.Count(body, `data-compare="head"`); n != 1 {
		t.Errorf("%d compare-with-now links, want 1 (not on the head)", n)
	}
}

// changedFleet is largeFleet(n) where every pair changed: every pair of
// every 4th cluster Failed with a long error, the others Applied (the
// 40 failing pairs of largeFleet fixed); every revision and objects moved.
func changedFleet(n int) status.Snapshot {
	s := largeFleet(n)
	rev := strings.Repeat("6", 40)
	s.Clusters = slices.Clone(s.Clusters)
	for i := range s.Clusters {
		ps := slices.Clone(s.Clusters[i].Profiles)
		for j := range ps {
			ps[j].Revision, ps[j].Objects = rev, 31
			if i%4 == 0 {
				ps[j].State = status.StateFailed
				ps[j].Error = &status.Error{Object: "Deployment/app/app", File: "profiles/x.yaml", Line: 3, Message: strings.Repeat("e", 4000)}
			} else {
				ps[j].State, ps[j].Error = status.StateApplied, nil
			}
		}
		s.Clusters[i].Profiles = ps
	}
	return s
}

func newLargeCompare(n int) http.Handler {
	h := &memHistory{}
	h.add(Frame{Commit: comA, Time: tA, Snapshot: largeFleet(n)})
	h.add(Frame{Commit: comB, Time: tB, Snapshot: changedFleet(n)})
	return asViewer(fleetViewer, New(Options{History: h}).Handler())
}

// At 2,000 clusters where every pair changed, the compare page lists
// MaxCompareRows rows, the new failures first, counts the rest, and stays
// under 2 MiB.
func TestCompareAt2000Clusters(t *testing.T) {
	ts := httptest.NewServer(newLargeCompare(2000))
	defer ts.Close()
	body := mustGet(t, ts, "/compare?from="+comA)
	if len(body) > maxPageBytes {
		t.Errorf("compare at 2,000 clusters: %d bytes, want at most %d", len(body), maxPageBytes)
	}
	rows := changeRows(body)
	if len(rows) != MaxCompareRows {
		t.Fatalf("%d rows, want %d", len(rows), MaxCompareRows)
	}
	for _, r := range rows {
		if !strings.HasSuffix(r, ":failed") {
			t.Fatalf("row %s before the 5,000 new failures were listed", r)
		}
	}
	has(t, "compare at 2,000 clusters", body, `<p id="more-changes">… and 19500 more changes`,
		`20000 cluster and pair changes · <span data-count="failed">5000 failed</span> · <span data-count="fixed">40 fixed</span> · <span data-count="changed">14960 changed</span>`)
	t.Logf("compare at 2,000 clusters, 20,000 changed pairs: %d bytes", len(body))
}

// BenchmarkCompare measures the compare page at 2,000 clusters of 10
// profiles where every pair changed: server time (ns/op, the handler
// alone) and its bytes (bytes/page).
func BenchmarkCompare(b *testing.B) {
	handler := newLargeCompare(2000)
	req := httptest.NewRequest(http.MethodGet, "/compare?from="+comA+"&to="+comB, nil)
	var size int
	for b.Loop() {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET /compare: %d", rec.Code)
		}
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes/page")
}
