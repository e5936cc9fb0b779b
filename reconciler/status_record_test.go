package reconciler

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/metrics"
)

// TestCountApplyCountsWrites: regatta_applies_total counts applies that
// wrote to the cluster; a pass that found every object unchanged (one that
// re-checked a waiting add-on's health) is no apply.
func TestCountApplyCountsWrites(t *testing.T) {
	r := &Reconciler{opts: Options{Metrics: metrics.New()}}
	for _, res := range []apply.Result{
		{State: apply.StateProgressing, Counts: apply.Counts{Unchanged: 5}},
		{State: apply.StateApplied, Counts: apply.Counts{Unchanged: 5}},
		{State: apply.StateApplied, Skipped: true},
		{State: apply.StateDryRun, Counts: apply.Counts{Configured: 5}},
		{State: apply.StateProgressing, Counts: apply.Counts{Created: 1, Unchanged: 4}},
		{State: apply.StateApplied, Counts: apply.Counts{Configured: 1}},
		{State: apply.StateApplied, Counts: apply.Counts{Unchanged: 4, Deleted: 1}},
	} {
		res.Cluster, res.Profile = "c", "p"
		r.countApply(res)
	}
	if got := testutil.ToFloat64(r.opts.Metrics.Applies.WithLabelValues("c", "p")); got != 3 {
		t.Errorf("regatta_applies_total = %v, want 3 (the writes)", got)
	}
}
