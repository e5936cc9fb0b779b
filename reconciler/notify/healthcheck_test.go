package notify

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// healthFleet is n clusters whose check crashing-pod of alert pods finds
// the Pods of degraded[i] Degraded on cluster i; unreachable clusters
// have no health check record (their checks did not run).
func healthFleet(degraded []int, unreachable map[int]bool) status.Snapshot {
	var snap status.Snapshot
	for i, d := range degraded {
		c := status.ClusterStatus{Cluster: fmt.Sprintf("c%d", i), Reachable: !unreachable[i]}
		if !c.Reachable {
			c.Error = "connection refused"
			snap.Clusters = append(snap.Clusters, c)
			continue
		}
		h := status.HealthCheck{Alert: "pods", Check: "crashing-pod", Objects: 5, Degraded: d}
		for j := range d {
			h.Resources = append(h.Resources, status.ResourceHealth{Object: fmt.Sprintf("Pod web/crash-%d", j),
				Status: "Degraded", Message: "app: back-off 5m0s restarting failed container"})
		}
		c.HealthChecks = []status.HealthCheck{h}
		snap.Clusters = append(snap.Clusters, c)
	}
	return snap
}

// TestHealthCheckDegradedIsOneMessage: a check that finds crashing Pods
// on 2 of 3 clusters is one message naming the check, the clusters and
// the first resources with their messages; a cluster that goes
// unreachable resolves nothing; the Pods recovering is one resolution.
// Another alert (with its own check of the same name) hears nothing.
func TestHealthCheckDegradedIsOneMessage(t *testing.T) {
	ctx := context.Background()
	c, b := &clock{t: time.Unix(1e9, 0)}, &inbox{}
	pods, other := alert("pods"), alert("other")
	n := newTestNotifier(NewMemoryLedger(), c, b, pods, other)
	for range 3 {
		n.Step(ctx, healthFleet([]int{2, 0, 5}, nil))
		c.advance(20 * time.Second)
	}
	got := b.take()
	if len(got) != 1 {
		t.Fatalf("%d messages, want 1: %+v", len(got), got)
	}
	m := got[0]
	if m.Alert != "pods" || m.Kind != spec.AlertOnHealthCheckDegraded || m.Profile != "crashing-pod" || m.Count != 2 ||
		strings.Join(m.Clusters, ",") != "c0,c2" || m.Revision != "" {
		t.Fatalf("message %+v", m)
	}
	for _, want := range []string{"health check crashing-pod of alert pods reports resources Degraded on 2 clusters",
		"- c0: 2 Degraded: Pod web/crash-0 (app: back-off 5m0s restarting failed container), Pod web/crash-1 (",
		"- c2: 5 Degraded: Pod web/crash-0 (", "and 2 more"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, m.Text)
		}
	}
	for range 4 { // c0 and c2 unreachable for longer than GroupWait: still degraded as far as anyone knows
		n.Step(ctx, healthFleet([]int{2, 0, 5}, map[int]bool{0: true, 2: true}))
		c.advance(20 * time.Second)
	}
	if got := b.take(); len(got) != 0 {
		t.Fatalf("an unreachable cluster sent %+v", got)
	}
	for range 3 {
		n.Step(ctx, healthFleet([]int{0, 0, 0}, nil))
		c.advance(20 * time.Second)
	}
	got = b.take()
	if len(got) != 1 || !got[0].Resolved || got[0].Profile != "crashing-pod" ||
		!strings.HasPrefix(got[0].Title, "Resolved: health check crashing-pod of alert pods") {
		t.Fatalf("resolution: %+v", got)
	}
}
