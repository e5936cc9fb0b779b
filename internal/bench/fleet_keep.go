package bench

import (
	"cmp"
	"slices"
)

// keepFrom carries over from old, an earlier run of the fleet phase
// measured at at, what this run did not measure: the sizes it did not run
// (regatta's, with and without drift watches, Flux's), the calibration and the shard run, each marked with
// the commit and date it was measured at. A run of -fleet 100,500 then
// leaves the rows of 1,000 and 2,000 in the report, marked as older. When
// this run has fewer sizes than the earlier run's curves, those curves are
// kept whole (their 100 and 500 beside this run's), so the curves and
// their targets keep reading one measurement (complete); a run of as many
// sizes replaces them, so nothing piles up.
func (f *FleetResult) keepFrom(old *FleetResult, at PhaseRun) {
	curve := old.complete()
	keepCurve := len(f.complete()) < len(curve)
	sameRun := func(a FleetRun) func(FleetRun) bool {
		return func(b FleetRun) bool { return a.Clusters == b.Clusters && slices.Equal(a.Args, b.Args) }
	}
	mark := func(m *PhaseRun) *PhaseRun {
		if m != nil {
			return m
		}
		return &at
	}
	for _, r := range old.Runs {
		inCurve := slices.ContainsFunc(curve, func(c FleetRun) bool { return sameRun(r)(c) && c.Measured == r.Measured })
		if !slices.ContainsFunc(f.Runs, sameRun(r)) || (keepCurve && inCurve) {
			r.Measured = mark(r.Measured)
			f.Runs = append(f.Runs, r)
		}
	}
	// Sizes with regatta's defaults first, smallest first: the curves
	// read them in that order.
	slices.SortStableFunc(f.Runs, func(a, b FleetRun) int {
		return cmp.Or(cmp.Compare(len(a.Args), len(b.Args)), cmp.Compare(a.Clusters, b.Clusters))
	})
	for _, x := range old.Flux {
		if f.fluxAt(x.Clusters) == nil {
			x.Measured = mark(x.Measured)
			f.Flux = append(f.Flux, x)
		}
	}
	slices.SortStableFunc(f.Flux, func(a, b FleetFluxRun) int { return cmp.Compare(a.Clusters, b.Clusters) })
	for _, r := range old.NoWatches {
		if f.noWatchesAt(r.Clusters) == nil {
			r.Measured = mark(r.Measured)
			f.NoWatches = append(f.NoWatches, r)
		}
	}
	slices.SortStableFunc(f.NoWatches, func(a, b FleetRun) int { return cmp.Compare(a.Clusters, b.Clusters) })
	if len(f.Calibration) == 0 {
		for _, r := range old.Calibration {
			r.Measured = mark(r.Measured)
			f.Calibration = append(f.Calibration, r)
		}
	}
	if f.Shard == nil && old.Shard != nil {
		s := *old.Shard
		s.Measured = mark(s.Measured)
		f.Shard = &s
	}
}

// measuredNote marks a row carried over from an earlier run.
func measuredNote(m *PhaseRun) string {
	if m == nil {
		return ""
	}
	return " (measured at `" + m.Commit + "`, " + m.Date.UTC().Format("2006-01-02") + ")"
}
