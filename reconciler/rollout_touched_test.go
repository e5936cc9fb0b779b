package reconciler

import (
	"log/slog"
	"testing"
	"testing/fstest"
	"time"

	"github.com/regatta-dev/regatta/reconciler/metrics"
	"github.com/regatta-dev/regatta/reconciler/rollout"
	"github.com/regatta-dev/regatta/spec"
)

// TestSupersededRolloutTouches: a commit that supersedes a rollout marks
// the clusters that rollout reached as touched (they go first) only when
// it halted; superseding a rollout that was going well marks none, so the
// new change starts at the first stage again.
func TestSupersededRolloutTouches(t *testing.T) {
	for _, halted := range []bool{false, true} {
		ro := newRollouts(metrics.New(), slog.New(slog.DiscardHandler), time.Now)
		tree := fstest.MapFS{"addons/web/cm.yaml": {Data: []byte("kind: ConfigMap\n")}}
		v1 := &spec.Profile{Spec: spec.ProfileSpec{HealthTimeout: "1m", Rollout: &spec.Rollout{}}}
		v1.Metadata.Name = "web"
		pr := ro.observe(&revision{sha: "r1", tree: tree}, v1)
		pr.pair("prod-1").state = rollout.Done
		pr.last = rollout.Decision{Halted: halted}
		v2 := *v1
		v2.Spec.HealthTimeout = "2m"
		next := ro.observe(&revision{sha: "r2", tree: tree}, &v2)
		if next == pr {
			t.Fatal("a changed profile did not start a new rollout")
		}
		if got := next.pair("prod-1").touched; got != halted {
			t.Errorf("earlier rollout halted=%v: prod-1 touched=%v, want %v", halted, got, halted)
		}
	}
}

// TestSupersededPassReportsNothing: a pass of v1's rollout that finishes
// after v2's rollout started (its cluster admitted for v1, the commit of
// v2 landing meanwhile) neither counts its cluster as reached by v2 nor
// admits it for v2: v2 goes through the stages on that cluster too. CI saw
// v2 reach a production cluster together with the canary this way.
func TestSupersededPassReportsNothing(t *testing.T) {
	ro := newRollouts(metrics.New(), slog.New(slog.DiscardHandler), time.Now)
	tree := fstest.MapFS{"addons/web/cm.yaml": {Data: []byte("kind: ConfigMap\n")}}
	v1 := &spec.Profile{Spec: spec.ProfileSpec{HealthTimeout: "1m", Rollout: &spec.Rollout{}}}
	v1.Metadata.Name = "web"
	r1 := &revision{sha: "r1", tree: tree}
	members := []rollout.Cluster{{Name: "prod-1"}}
	ro.observe(r1, v1)
	fp1 := fingerprint(r1, v1)
	if !ro.admit(v1, fp1, "prod-1", members, nil) {
		t.Fatal("v1 not admitted on its only cluster")
	}
	v2 := *v1
	v2.Spec.HealthTimeout = "2m"
	r2 := &revision{sha: "r2", tree: tree}
	ro.observe(r2, &v2)
	fp2 := fingerprint(r2, &v2)
	if got := ro.report(v1, fp1, "prod-1", rollout.Done, members, nil); got != nil {
		t.Errorf("v1's pass reported into v2's rollout: %+v", got)
	}
	ro.markReached("web", fp1, "prod-1")
	if ro.reached("web", fp2, "prod-1") {
		t.Error("v1's pass made prod-1 count as reached by v2")
	}
	if ro.admit(v1, fp1, "prod-1", members, nil) {
		t.Error("a pass of the replaced rollout was admitted")
	}
	if ro.reached("web", fp1, "prod-1") {
		t.Error("the replaced rollout's state is still read")
	}
}
