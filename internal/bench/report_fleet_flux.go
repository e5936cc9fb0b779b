package bench

import (
	"fmt"
	"math"
	"strings"
)

// fluxSizes are the sizes issue 37 compares regatta and Flux at.
var fluxSizes = []int{100, 500}

// fluxAt is Flux's run of n clusters, or nil.
func (f *FleetResult) fluxAt(n int) *FleetFluxRun {
	for i := range f.Flux {
		if f.Flux[i].Clusters == n {
			return &f.Flux[i]
		}
	}
	return nil
}

// noWatchesAt is regatta's run of n clusters with --drift-watches=false,
// or nil.
func (f *FleetResult) noWatchesAt(n int) *FleetRun {
	for i := range f.NoWatches {
		if f.NoWatches[i].Clusters == n {
			return &f.NoWatches[i]
		}
	}
	return nil
}

// fluxTargets judge "regatta faster and smaller than Flux's
// kustomize-controller at 100 and 500" twice: regatta with its defaults
// (drift watches: drift corrected within seconds, which Flux does not do),
// and like for like, with --drift-watches=false at Flux's interval (drift
// corrected as often as Flux corrects it: at each Kustomization's
// interval).
func fluxTargets(f *FleetResult) []target {
	t := fluxTarget(f, "fleet: regatta faster and smaller than Flux's kustomize-controller at 100 and 500 clusters (same run, one Kustomization "+
		"per cluster), regatta with its defaults (drift watches)", f.at)
	nw := fluxTarget(f, "fleet: the same, like for like: regatta with `--drift-watches=false` and Flux's interval as `--drift-interval` (drift corrected as often as Flux corrects it)",
		f.noWatchesAt)
	return []target{t, nw}
}

// fluxTarget judges regatta's runs that pick returns against Flux's: at
// each size, regatta's last cluster earlier than Flux's for the first
// rollout and the change, and regatta's idle RSS below the controller's;
// both measured in the same run, neither missing a cluster.
func fluxTarget(f *FleetResult, name string, pick func(int) *FleetRun) target {
	t := target{name: name, how: fleetHow, figure: "–"}
	if f == nil {
		return t
	}
	var figs []string
	allFaster, allSmaller := true, true
	var at *PhaseRun
	for i, n := range fluxSizes {
		r, x := pick(n), f.fluxAt(n)
		if r == nil || x == nil || !sameRun(r.Measured, x.Measured) || (i > 0 && !sameRun(r.Measured, at)) || r.Idle.RSS == 0 || x.Idle.RSS == 0 {
			return t // not all measured in one run
		}
		at = r.Measured
		faster := r.First.Missing == 0 && r.Change.Missing == 0 && r.First.Last < x.First.Last && r.Change.Last < x.Change.Last
		smaller := r.Idle.RSS < x.Idle.RSS
		allFaster, allSmaller = allFaster && faster, allSmaller && smaller
		figs = append(figs, fmt.Sprintf("%d: first rollout last %s vs %s (%s), change last %s vs %s (%s), idle RSS %s vs %s (%s)",
			n, secs(r.First.Last), flux(x.First), ratio(x.First.Last/r.First.Last), secs(r.Change.Last), flux(x.Change),
			ratio(x.Change.Last/r.Change.Last), mib(r.Idle.RSS), mib(x.Idle.RSS), ratio(float64(x.Idle.RSS)/float64(r.Idle.RSS))))
	}
	t.figure = fmt.Sprintf("faster at both: %s; smaller at both: %s. regatta vs Flux (Flux ÷ regatta) at %s%s", yesNo(allFaster), yesNo(allSmaller),
		strings.Join(figs, "; "), measuredNote(at))
	t.met = met(allFaster && allSmaller)
	return t
}

// sameRun reports whether a and b mark figures of one run: both of this
// run (nil), or both carried over from the run of the same commit and
// start time.
func sameRun(a, b *PhaseRun) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Commit == b.Commit && a.Date.Equal(b.Date)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// flux is Flux's last cluster, with the clusters it never reached.
func flux(l Latency) string {
	if l.Missing > 0 {
		return fmt.Sprintf("%s (%d missing)", secs(l.Last), l.Missing)
	}
	return secs(l.Last)
}

// reportFleetFlux is the side-by-side table of regatta and Flux.
func reportFleetFlux(b *strings.Builder, f *FleetResult) {
	if len(f.Flux) == 0 {
		b.WriteString("**Flux side by side.** Not measured in this run (`-fleet-flux 100,500 -flux-kustomize-controller PATH`).\n\n")
		return
	}
	fmt.Fprintf(b, "**Flux side by side.** Flux's kustomize-controller (`--concurrent %d`) on fresh API servers of its own right "+
		"after regatta's run of the same size, one Kustomization per cluster (interval %s, `wait: true`), artifact served without "+
		"source-controller; regatta's idle cost per cluster in this run: %s; `--drift-watches=false` rows are regatta with Flux's "+
		"drift interval and no watches (%s).\n\n", f.Flux[0].Concurrent, FluxInterval, f.perClusterNote(), methods("fleet"))
	b.WriteString("| clusters | method | start: reach every cluster | first rollout p50 / p99 / last | change p50 / p99 / last | Ready: first, change | " +
		"requests per cluster in the change | RSS converged / idle | heap idle | goroutines | CPU to converge | idle CPU per minute | idle requests /cluster/min (watches) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range f.Flux {
		if r := f.at(x.Clusters); r != nil {
			fmt.Fprintf(b, "| %d | regatta%s | %s | %s | %s | – | %.1f | %s / %s | %s | %d | %s | %s | %.2f (%.2f) |\n", r.Clusters, measuredNote(r.Measured),
				secs(r.StartSecs), lat(r.First), lat(r.Change), r.ChangeRequests, mib(r.Converged.RSS), mib(r.Idle.RSS), mib(r.Idle.HeapInuse),
				r.Idle.Goroutines, secs(r.Converged.CPUSecs), secs(perMinute(r.IdleCPUPerDrift, r.DriftSecs)), r.IdleOther, r.IdleWatches)
		}
		if r := f.noWatchesAt(x.Clusters); r != nil {
			fmt.Fprintf(b, "| %d | regatta `--drift-watches=false`%s | %s | %s | %s | – | %.1f | %s / %s | %s | %d | %s | %s | %.2f (%.2f) |\n", r.Clusters,
				measuredNote(r.Measured), secs(r.StartSecs), lat(r.First), lat(r.Change), r.ChangeRequests, mib(r.Converged.RSS), mib(r.Idle.RSS),
				mib(r.Idle.HeapInuse), r.Idle.Goroutines, secs(r.Converged.CPUSecs), secs(perMinute(r.IdleCPUPerDrift, r.DriftSecs)), r.IdleOther, r.IdleWatches)
		}
		fmt.Fprintf(b, "| %d | Flux%s | %s | %s | %s | %s, %s | %.1f | %s / %s | %s | %d | %s | %s | %.2f (%.2f) |\n", x.Clusters,
			measuredNote(x.Measured), secs(x.StartSecs), lat(x.First), lat(x.Change), secs(x.FirstReadySecs), secs(x.ChangeReadySecs), x.ChangeRequests,
			mib(x.Converged.RSS), mib(x.Idle.RSS), mib(x.Idle.HeapInuse), x.Idle.Goroutines, secs(x.Converged.CPUSecs), secs(x.IdleCPU),
			x.IdleOther, x.IdleWatches)
	}
	b.WriteString("\n")
	for _, x := range f.Flux {
		if x.Err != "" {
			fmt.Fprintf(b, "- Flux at %d clusters stopped: %s\n", x.Clusters, x.Err)
		}
	}
}

// perMinute turns seconds per drift interval into seconds per minute.
func perMinute(perDrift, driftSecs float64) float64 {
	if driftSecs <= 0 {
		return 0
	}
	return perDrift * 60 / driftSecs
}

// perClusterNote is what one more idle cluster costs regatta, from the
// curves of this run: RSS and goroutines per cluster, least squares over
// every size.
func (f *FleetResult) perClusterNote() string {
	m, _, _, ok := f.rssSlope(0, math.MaxInt)
	var xs, gs []float64
	for _, r := range f.complete() {
		xs, gs = append(xs, float64(r.Clusters)), append(gs, float64(r.Idle.Goroutines))
	}
	g := Slope(xs, gs)
	if !ok || math.IsNaN(g) {
		return "one size only, no slope"
	}
	return fmt.Sprintf("%s and %.0f goroutines per cluster", kib(m), g)
}
