package bench

import (
	"cmp"
	"slices"
)

// keepFrom carries over from old, an earlier run of the fleet phase
// measured at at, what this run did not measure: the sizes it did not run
// (regatta's, Flux's), the calibration and the shard run, each marked with
// the commit and date it was measured at. A run of -fleet 100,500 then
// leaves the rows of 1,000 and 2,000 in the report, marked as older.
func (f *FleetResult) keepFrom(old *FleetResult, at PhaseRun) {
	mark := func(m *PhaseRun) *PhaseRun {
		if m != nil {
			return m
		}
		return &at
	}
	for _, r := range old.Runs {
		if !slices.ContainsFunc(f.Runs, func(n FleetRun) bool { return n.Clusters == r.Clusters && slices.Equal(n.Args, r.Args) }) {
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
