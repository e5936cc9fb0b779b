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
