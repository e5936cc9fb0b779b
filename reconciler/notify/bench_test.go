package notify

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/spec"
)

// BenchmarkStep is one evaluation of the fleet's status at 2,000 clusters
// with five alerts: idle (every pair Applied) and failing (a fleet-wide
// failure of one profile, told already). It reports the messages a
// fleet-wide failure at 1,000 clusters sends (msgs/failure).
func BenchmarkStep(b *testing.B) {
	rev := strings.Repeat("ab", 20)
	alerts := []*spec.Alert{alert("a"), alert("b", spec.AlertOnFailed), alert("c", spec.AlertOnRolloutHalted),
		alert("d", spec.AlertOnDriftCorrected), alert("e", spec.AlertOnUnreachable)}
	for _, tc := range []struct {
		name   string
		failed int
	}{{"idle", 0}, {"failing", 2000}} {
		b.Run(tc.name, func(b *testing.B) {
			snap := fleet(2000, tc.failed, rev)
			c := &clock{t: time.Unix(1e9, 0)}
			n := newTestNotifier(NewMemoryLedger(), c, &inbox{}, alerts...)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				n.Step(ctx, snap)
				c.advance(time.Second)
			}
		})
	}
	b.Run("messages", func(b *testing.B) {
		for b.Loop() {
			c, in := &clock{t: time.Unix(1e9, 0)}, &inbox{}
			n := newTestNotifier(NewMemoryLedger(), c, in, alert("ops", spec.AlertOnFailed))
			for _, failed := range []int{10, 250, 600, 1000, 1000, 1000} {
				n.Step(context.Background(), fleet(1000, failed, rev))
				c.advance(10 * time.Second)
			}
			b.ReportMetric(float64(len(in.take())), "msgs/failure")
		}
	})
}
