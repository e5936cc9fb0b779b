package ui

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// maxPageBytes is the bound on a page at 2,000 clusters.
const maxPageBytes = 2 << 20

// largeFleet is n clusters × 10 profiles (two of them a tenant's); every
// 50th cluster has a Failed pair, every 200th is unreachable.
func largeFleet(n int) status.Snapshot {
	rev := strings.Repeat("5", 40)
	s := snapshotOf(rev)
	for i := range n {
		c := status.ClusterStatus{Cluster: fmt.Sprintf("cluster-%04d", i), SourceRevision: rev, Reachable: i%200 != 7,
			Labels:           map[string]string{"env": []string{"prod", "stage", "dev"}[i%3], "region": fmt.Sprintf("r%d", i%5)},
			ClassifierLabels: map[string]map[string]string{"geo": {"region": fmt.Sprintf("r%d", i%5)}}}
		for p := range 10 {
			pr := status.Profile{Name: fmt.Sprintf("profile-%02d", p), State: status.StateApplied, Revision: rev, Objects: 30, Health: "Healthy"}
			if p >= 8 {
				pr.Tenant = "team-x"
			}
			if i%50 == 3 && p == 4 {
				pr.State = status.StateFailed
				pr.Error = &status.Error{Object: "Deployment/app/app", File: "profiles/profile-04.yaml", Line: 9, Message: "apply failed: " + strings.Repeat("x", 200)}
			}
			c.Profiles = append(c.Profiles, pr)
		}
		if !c.Reachable {
			c.Error = "dial tcp: connection refused"
		}
		s.Clusters = append(s.Clusters, c)
	}
	return s
}

func newLargeServer(tb testing.TB, n int) *httptest.Server {
	h := &memHistory{}
	h.add(Frame{Commit: strings.Repeat("e", 40), Time: time.Now(), Snapshot: largeFleet(n)})
	ts := httptest.NewServer(asViewer(fleetViewer, New(Options{History: h}).Handler()))
	tb.Cleanup(ts.Close)
	return ts
}

// At 2,000 clusters the fleet page shows 100 clusters a page, problems
// first, filters narrow on the server, and no page passes 2 MiB.
func TestFleetPageAt2000Clusters(t *testing.T) {
	ts := newLargeServer(t, 2000)
	body := mustGet(t, ts, "/")
	rows := strings.Count(body, `<tr data-cluster=`)
	if rows != PageSize {
		t.Errorf("first page: %d cluster rows, want %d", rows, PageSize)
	}
	// 40 failing and 10 unreachable clusters come first
	if first := attrs(body, "data-cluster"); !strings.Contains(body, `<tr data-cluster="cluster-0003" class="problem">`) || len(first) == 0 {
		t.Error("first page lacks the failing cluster-0003 as a problem row")
	}
	problemRows := strings.Count(body, `class="problem"`)
	if problemRows != 50 {
		t.Errorf("first page: %d problem rows, want the 50 clusters with problems first", problemRows)
	}
	has(t, "first page", body, `<nav id="pages"`, `href="/?page=2"`, `href="/?page=20"`, `<p id="matched">2000 of 2000 clusters`)
	last := mustGet(t, ts, "/?page=20")
	has(t, "page 20", last, "<title>fleet: page 20 · regatta</title>")
	has(t, "filtered page", mustGet(t, ts, "/?state=Failed&label=env%3Dprod"), "<title>fleet: state Failed, env=prod · regatta</title>")
	if n := strings.Count(last, `<tr data-cluster=`); n != PageSize {
		t.Errorf("page 20: %d rows, want %d", n, PageSize)
	}
	has(t, "page 20", last, `<tr data-cluster="cluster-1999"`, `href="/?page=19"`)
	hasNot(t, "page 20", last, `class="problem"`)

	for q, want := range map[string]int{
		"q=cluster-19":                       100,
		"q=CLUSTER-0042":                     1,
		"label=env%3Dprod":                   667,
		"label=env%3Dprod&label=region%3Dr0": 134,
		"label=region":                       2000,
		"state=Failed":                       40,
		"state=problems":                     50,
		"state=Unreachable":                  10,
		"profile=profile-04":                 2000,
		"profile=nope":                       0,
		"tenant=team-x":                      2000,
		"state=Failed&label=env%3Dprod":      14,
	} {
		body := mustGet(t, ts, "/?"+q)
		if !strings.Contains(body, fmt.Sprintf(`<p id="matched">%d of 2000 clusters`, want)) {
			t.Errorf("?%s: want %d clusters matched", q, want)
		}
		if rows := strings.Count(body, `<tr data-cluster=`); rows != min(want, PageSize) {
			t.Errorf("?%s: %d rows, want %d", q, rows, min(want, PageSize))
		}
	}
	has(t, "filtered pages", mustGet(t, ts, "/?label=env%3Dprod"), `href="/?label=env%3Dprod&amp;page=2"`, `value="env=prod"`)

	for _, path := range []string{"/", "/?page=7", "/?state=problems", "/profiles/profile-04", "/clusters/cluster-0003", "/revisions", "/events"} {
		code, body := get(t, ts, path)
		if code != http.StatusOK || len(body) > maxPageBytes {
			t.Errorf("GET %s at 2,000 clusters: %d, %d bytes; want 200 and at most %d", path, code, len(body), maxPageBytes)
		}
	}
}

// BenchmarkFleetPage measures the fleet page's first page at 100, 500
// and 2,000 clusters of 10 profiles: server time per page (ns/op, the
// handler alone, without the network) and its bytes (bytes/page).
func BenchmarkFleetPage(b *testing.B) {
	for _, n := range []int{100, 500, 2000} {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			h := &memHistory{}
			h.add(Frame{Commit: strings.Repeat("e", 40), Time: time.Now(), Snapshot: largeFleet(n)})
			handler := asViewer(fleetViewer, New(Options{History: h}).Handler())
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			var size int
			for b.Loop() {
				rec := httptest.NewRecorder()
				handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET /: %d", rec.Code)
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
}

// Texts a profile controls are bounded in lists: a profile page over
// 2,000 clusters whose every pair holds a 4 KiB message stays under
// 2 MiB; the cluster page shows the message whole.
func TestLongMessagesStayBounded(t *testing.T) {
	s := largeFleet(2000)
	long := strings.Repeat("very long health message ", 4096/25)
	for i := range s.Clusters {
		for j := range s.Clusters[i].Profiles {
			s.Clusters[i].Profiles[j].State = status.StateFailed
			s.Clusters[i].Profiles[j].Message = long
		}
	}
	h := &memHistory{}
	h.add(Frame{Commit: strings.Repeat("e", 40), Time: time.Now(), Snapshot: s})
	ts := httptest.NewServer(asViewer(fleetViewer, New(Options{History: h}).Handler()))
	defer ts.Close()
	for _, path := range []string{"/", "/profiles/profile-04", "/?state=Failed", "/clusters/cluster-0001"} {
		if body := mustGet(t, ts, path); len(body) > maxPageBytes {
			t.Errorf("GET %s: %d bytes, want at most %d", path, len(body), maxPageBytes)
		}
	}
	has(t, "cluster page", mustGet(t, ts, "/clusters/cluster-0001"), strings.TrimSpace(long))
}
