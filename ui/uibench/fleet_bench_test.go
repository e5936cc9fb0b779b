package uibench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/browser"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/ui"
	"github.com/regatta-dev/regatta/ui/access"
)

// benchClusters is the fleet size of issue 53's yardstick.
const benchClusters = 2000

// benchProfiles are the profiles each cluster holds.
const benchProfiles = 10

// BenchmarkFleetPageBrowser serves the fleet page of a 2,000-cluster
// snapshot and loads it in chromium: the server's time per page
// (server-ms/op), the page's size (page-bytes) and the browser's first
// contentful paint (fcp-ms), each the mean over b.N loads.
// Issue 53's yardsticks: first paint under a second, a page under 2 MiB.
//
//	go test -run '^$' -bench FleetPageBrowser -benchtime 10x ./ui/uibench
func BenchmarkFleetPageBrowser(b *testing.B) {
	srv := httptest.NewServer(fleetViewer(ui.New(ui.Options{
		History: oneFrame{synthetic(benchClusters, benchProfiles)},
		Log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		Title:   "bench",
	}).Handler()))
	b.Cleanup(srv.Close)
	p := browser.Start(b).NewPage(b)
	var serverTime, fcp time.Duration
	var bytes int
	for b.Loop() {
		d, n := serve(b, srv.URL+"/")
		serverTime += d
		bytes = n
		p.Go(srv.URL + "/")
		fcp += p.FirstContentfulPaint()
	}
	n := float64(b.N)
	b.ReportMetric(float64(serverTime.Milliseconds())/n, "server-ms/op")
	b.ReportMetric(float64(fcp.Microseconds())/1000/n, "fcp-ms")
	b.ReportMetric(float64(bytes), "page-bytes")
	if rows := p.Count("#matrix tr[data-cluster]"); rows == 0 {
		b.Fatalf("the fleet page shows no cluster")
	}
	p.Screenshot("fleet-2000")
	p.NoErrors()
}

// serve fetches url and returns how long the server took to the last
// byte, and the body's size.
func serve(b *testing.B, url string) (time.Duration, int) {
	b.Helper()
	start := time.Now()
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return time.Since(start), len(body)
}

// fleetViewer lets every request see the whole fleet, as the access
// gate's loopback mode does.
func fleetViewer(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(access.WithViewer(r.Context(), access.Viewer{Fleet: true})))
	})
}

// oneFrame is a History of one status commit.
type oneFrame struct{ f ui.Frame }

func (h oneFrame) Head(context.Context) (ui.Frame, error)          { return h.f, nil }
func (h oneFrame) At(context.Context, time.Time) (ui.Frame, error) { return h.f, nil }
func (h oneFrame) Frame(context.Context, string) (ui.Frame, error) { return h.f, nil }
func (h oneFrame) Parent(context.Context, string) (ui.Frame, error) {
	return ui.Frame{}, ui.ErrNoParent
}
func (h oneFrame) Timeline(context.Context, int) ([]ui.Entry, error) {
	return []ui.Entry{{Commit: h.f.Commit, Time: h.f.Time, SourceRevision: h.f.Snapshot.Fleet.SourceRevision,
		AppliedRevision: h.f.Snapshot.Fleet.AppliedRevision, Changed: len(h.f.Snapshot.Clusters)}}, nil
}

// synthetic is a fleet of n clusters with profiles each: every 50th
// cluster has a failing pair, every 200th is unreachable.
func synthetic(n, profiles int) ui.Frame {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	s := status.Snapshot{Fleet: status.Fleet{APIVersion: status.APIVersion, Kind: status.KindFleetStatus, SourceRevision: rev, AppliedRevision: rev}}
	for i := range n {
		c := status.ClusterStatus{APIVersion: status.APIVersion, Kind: status.KindClusterStatus,
			Cluster: fmt.Sprintf("cluster-%04d", i), SourceRevision: rev, Reachable: i%200 != 199, KubernetesVersion: "v1.37.2",
			Labels: map[string]string{"env": []string{"prod", "staging", "dev"}[i%3], "region": fmt.Sprintf("region-%d", i%8)}}
		for j := range profiles {
			p := status.Profile{Name: fmt.Sprintf("profile-%02d", j), State: "Applied", Revision: rev, Objects: 30, Health: "Healthy"}
			if i%50 == 49 && j == 0 {
				p.State, p.Error = "Failed", &status.Error{Object: "Deployment/app/web", Message: "Deployment/app/web: not healthy within 5m0s: 0 of 3 replicas available"}
			}
			c.Profiles = append(c.Profiles, p)
		}
		s.Clusters = append(s.Clusters, c)
	}
	return ui.Frame{Commit: "fedcba9876543210fedcba9876543210fedcba98", Time: time.Now(), Snapshot: s}
}
