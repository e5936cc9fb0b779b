package bench

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// fleetHow names the fleet phase in the targets table.
const fleetHow = "fleet phase (§7)"

// fleetTargets are the targets of issue 37 item 4.
func fleetTargets(r *Results) []target {
	ts := []target{
		{name: "fleet: ≤ 1 MiB RSS per idle cluster (slope 100 → 1,000)", how: fleetHow, figure: "–"},
		{name: "fleet: a fleet-wide change reaches all 1,000 clusters in ≤ 60 s", how: fleetHow, figure: "–"},
		{name: "fleet: idle ≤ 1 request per cluster per minute beyond the open watches", how: fleetHow, figure: "–"},
		{name: "fleet: restart at 1,000 clusters ≤ 60 s with 0 applies", how: fleetHow, figure: "–"},
		{name: "fleet: nothing grows faster than linearly (what one more cluster costs regatta at the largest sizes ≤ 1.5× at the smallest; its CPU against the API servers' for the same work)", how: fleetHow, figure: "–"},
		{name: "fleet: calibration, 10 clusters on one server vs on 10: per-cluster figures within 15 %", how: fleetHow, figure: "–"},
	}
	f := r.Fleet
	if f == nil {
		return append(ts, fluxTargets(f)...)
	}
	if slope, from, to, ok := f.rssSlope(100, 1000); ok {
		ts[0].figure = fmt.Sprintf("%s per cluster (idle RSS, least squares over %d → %d clusters)", kib(slope), from, to)
		ts[0].met = met(slope <= 1<<20)
	}
	if run := f.at(1000); run != nil && run.Change.Clusters > 0 {
		ts[1].figure = fmt.Sprintf("last cluster %s (p50 %s, p99 %s; %d of %d)", secs(run.Change.Last), secs(run.Change.P50),
			secs(run.Change.P99), run.Change.Clusters, run.Clusters)
		ts[1].met = met(run.Change.Missing == 0 && run.Change.Last <= 60)
	}
	if run := f.largestDriftIdle(); run != nil {
		ts[2].figure = fmt.Sprintf("%.2f requests per cluster per minute at %d clusters (plus %.2f watches re-opened; drift interval %s, idle window %s)%s",
			run.IdleOther, run.Clusters, run.IdleWatches, secs(run.DriftSecs), secs(run.IdleSecs), measuredNote(run.Measured))
		ts[2].met = met(run.IdleOther <= 1)
	}
	if run := f.at(1000); run != nil && run.Restart != nil && run.Restart.Secs > 0 {
		ts[3].figure = fmt.Sprintf("%s, %.0f applies, %d writes", secs(run.Restart.Secs), run.Restart.Applies, sumWrites(run.Restart.Writes))
		ts[3].met = met(run.Restart.Secs <= 60 && run.Restart.Applies == 0 && sumWrites(run.Restart.Writes) == 0)
	}
	if fig, ok, measured := f.linearity(); measured {
		ts[4].figure, ts[4].met = fig, met(ok)
	}
	if fig, ok, measured := f.calibration(); measured {
		ts[5].figure, ts[5].met = fig, met(ok)
	}
	if run := f.at(1000); run != nil {
		ts[1].figure += measuredNote(run.Measured)
		ts[3].figure += measuredNote(run.Measured)
	}
	for _, i := range []int{0, 4} {
		if ts[i].figure != "–" {
			ts[i].figure += f.curvesNote()
		}
	}
	if len(f.Calibration) > 0 {
		ts[5].figure += measuredNote(f.Calibration[0].Measured)
	}
	return append(ts, fluxTargets(f)...)
}

// curvesNote marks the curves' figures when their runs were carried over
// from an earlier results.json.
func (f *FleetResult) curvesNote() string {
	if c := f.complete(); len(c) > 0 {
		return measuredNote(c[0].Measured)
	}
	return ""
}

func kib(b float64) string { return fmt.Sprintf("%.0f KiB", b/1024) }

func sumWrites(w map[string]int) int {
	n := 0
	for _, v := range w {
		n += v
	}
	return n
}

// at is the run of n clusters with regatta's defaults, or nil.
func (f *FleetResult) at(n int) *FleetRun {
	for i := range f.Runs {
		if f.Runs[i].Clusters == n && len(f.Runs[i].Args) == 0 {
			return &f.Runs[i]
		}
	}
	return nil
}

// complete are the runs with regatta's defaults that measured the idle
// window, smallest first, of one measurement: the one with the most such
// runs (this run on a tie), so the curves never mix runs of different
// commits, machine loads and idle windows.
func (f *FleetResult) complete() []FleetRun {
	groups := map[string][]FleetRun{}
	for _, r := range f.Runs {
		if r.Idle.RSS > 0 && len(r.Args) == 0 {
			k := measuredNote(r.Measured) // "" for this run: first in order
			groups[k] = append(groups[k], r)
		}
	}
	var best []FleetRun
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		if len(groups[k]) > len(best) {
			best = groups[k]
		}
	}
	return best
}

// largestIdle is the largest run that measured the idle window.
func (f *FleetResult) largestIdle() *FleetRun {
	c := f.complete()
	if len(c) == 0 {
		return nil
	}
	return &c[len(c)-1]
}

// largestDriftIdle is the largest run with regatta's defaults whose idle
// window was at least its drift interval, so that it holds a drift pass
// (a shorter window may hold none and count no request): of the curves'
// measurement when one of its runs qualifies, else of any measurement.
func (f *FleetResult) largestDriftIdle() *FleetRun {
	held := func(r FleetRun) bool { return r.Idle.RSS > 0 && len(r.Args) == 0 && r.IdleSecs >= r.DriftSecs }
	var best *FleetRun
	for _, runs := range [][]FleetRun{f.complete(), f.Runs} {
		for i := range runs {
			if held(runs[i]) && (best == nil || runs[i].Clusters > best.Clusters) {
				best = &runs[i]
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// rssSlope is the least-squares slope of idle RSS over the runs from lo
// to hi clusters.
func (f *FleetResult) rssSlope(lo, hi int) (slope float64, from, to int, ok bool) {
	var xs, ys []float64
	for _, r := range f.complete() {
		if r.Clusters >= lo && r.Clusters <= hi {
			xs, ys = append(xs, float64(r.Clusters)), append(ys, float64(r.Idle.RSS))
		}
	}
	slope = Slope(xs, ys)
	if math.IsNaN(slope) {
		return 0, 0, 0, false
	}
	return slope, int(xs[0]), int(xs[len(xs)-1]), true
}

// cpuPer is CPU milliseconds per added cluster between two sizes' change
// figures ("–" where one was not measured).
func cpuPer(a, z, clusters float64) string {
	if a == 0 || z == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f ms", 1000*(z-a)/clusters)
}

// linearity compares what one more cluster costs at the largest sizes
// (the last two runs) with the smallest (the first two): regatta's work in
// the change, idle RSS per added cluster, and idle requests per cluster. A
// cost that grows faster than linearly costs more per added cluster as the
// fleet grows; a fixed cost (the first rollout's start, the process) does
// not count.
//
// regatta's work in the change is judged by what it allocated (a count
// that does not depend on the machine) and by its CPU against the API
// servers': each server holds the same 250 clusters at every size and
// serves the same requests per cluster, so their CPU per added cluster is
// the price of a fixed amount of work on the machine at that size (two
// cores hold regatta, the servers and etcd; at 2,000 clusters they are
// saturated). The change's wall time is shown beside; it judged alone
// when a run has no allocation figures (results before changeAllocBytes).
func (f *FleetResult) linearity() (string, bool, bool) {
	c := f.complete()
	if len(c) < 3 {
		return "", false, false
	}
	a, b, y, z := c[0], c[1], c[len(c)-2], c[len(c)-1]
	// per is a figure per added cluster at the smallest and largest sizes.
	per := func(v func(FleetRun) float64) (float64, float64) {
		return (v(b) - v(a)) / float64(b.Clusters-a.Clusters), (v(z) - v(y)) / float64(z.Clusters-y.Clusters)
	}
	memA, memZ := per(func(r FleetRun) float64 { return float64(r.Idle.RSS) })
	timeA, timeZ := per(func(r FleetRun) float64 { return r.Change.Last })
	fig := fmt.Sprintf("per added cluster, %d → %d vs %d → %d: ", a.Clusters, b.Clusters, y.Clusters, z.Clusters)
	var ok bool
	if a.ChangeAlloc > 0 && z.ChangeAlloc > 0 && a.ChangeServersCPU > 0 && z.ChangeServersCPU > 0 {
		allocA, allocZ := per(func(r FleetRun) float64 { return r.ChangeAlloc })
		cpuA, cpuZ := per(func(r FleetRun) float64 { return r.ChangeCPU })
		srvA, srvZ := per(func(r FleetRun) float64 { return r.ChangeServersCPU })
		fig += fmt.Sprintf("regatta's allocations in the change %s → %s (%s), its CPU %.1f → %.1f ms (%s) while the API servers' and "+
			"etcd's for the same requests per cluster went %.1f → %.1f ms (%s), idle RSS %s → %s (%s); beside, the change's last "+
			"cluster %.1f → %.1f ms (%s)", kib(allocA), kib(allocZ), ratio(allocZ/allocA), 1000*cpuA, 1000*cpuZ, ratio(cpuZ/cpuA),
			1000*srvA, 1000*srvZ, ratio(srvZ/srvA), kib(memA), kib(memZ), ratio(memZ/memA), 1000*timeA, 1000*timeZ, ratio(timeZ/timeA))
		ok = allocZ <= 1.5*allocA && cpuZ/cpuA <= 1.5*srvZ/srvA && memZ <= 1.5*memA
	} else {
		fig += fmt.Sprintf("change %.1f → %.1f ms (%s), idle RSS %s → %s (%s)", timeA*1000, timeZ*1000, ratio(timeZ/timeA),
			kib(memA), kib(memZ), ratio(memZ/memA))
		ok = timeZ <= 1.5*timeA && memZ <= 1.5*memA
	}
	// Idle requests compare only windows that each held a drift pass: a
	// shorter window may count none at one size and one at another.
	if a.IdleSecs >= a.DriftSecs && z.IdleSecs >= z.DriftSecs {
		fig += fmt.Sprintf("; idle requests per cluster %.2f → %.2f", a.IdleOther, z.IdleOther)
		ok = ok && z.IdleOther <= 1.5*a.IdleOther+0.05
	} else {
		fig += "; idle requests not compared (idle window shorter than the drift interval)"
	}
	return fig, ok, true
}

// calibrationRows are the figures compared between the two calibration
// runs: per cluster, or of the whole (same) fleet.
func calibrationRows(r FleetRun) []float64 {
	return []float64{r.First.P50, r.Change.P50, r.IdleOther, r.IdleCPUPerDrift, float64(r.Idle.RSS), float64(r.Idle.HeapInuse),
		float64(r.Idle.Goroutines), float64(r.Idle.Conns)}
}

var calibrationNames = []string{"first rollout p50 (s)", "change p50 (s)", "idle requests per cluster per minute",
	"regatta CPU per drift interval (s)", "regatta RSS idle (MiB)", "regatta heap in use idle (MiB)", "goroutines", "connections to API servers"}

// calibration compares the runs of the same fleet on a server per
// cluster and on one server.
func (f *FleetResult) calibration() (string, bool, bool) {
	if len(f.Calibration) != 2 || f.Calibration[0].Idle.RSS == 0 || f.Calibration[1].Idle.RSS == 0 {
		return "", false, false
	}
	sep, one := calibrationRows(f.Calibration[0]), calibrationRows(f.Calibration[1])
	var off []string
	for i := range sep {
		if d := relDiff(one[i], sep[i]); d > 0.15 {
			off = append(off, fmt.Sprintf("%s %+.0f %%", calibrationNames[i], 100*(one[i]-sep[i])/sep[i]))
		}
	}
	if len(off) == 0 {
		return fmt.Sprintf("all %d figures within 15 %% (§7 table)", len(sep)), true, true
	}
	return fmt.Sprintf("%d of %d figures differ by more than 15 %%: %s (§7 table)", len(off), len(sep), strings.Join(off, "; ")), false, true
}

func relDiff(a, b float64) float64 {
	if b == 0 {
		if a == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(a-b) / math.Abs(b)
}

func reportFleet(b *strings.Builder, r *Results) {
	b.WriteString("## 7. A large fleet: logical clusters on a few API servers (issue 37)\n\n")
	f := r.Fleet
	if f == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	how(b, "Each logical cluster a namespace-scoped entry on a shared kube-apiserver (250 per server) through a loopback address "+
		"of its own; `bin/regatta run` with its defaults; times from the push to the bench's watch seeing the cluster's marker; "+
		"idle requests per cluster per minute beyond the servers' own; a row with flags is an experiment", "fleet")
	if len(f.Calibration) > 0 {
		reportCalibration(b, f)
	}
	b.WriteString("| clusters | API servers | setup: servers, users | start (no profiles) | first rollout p50 / p99 / last | change p50 / p99 / last | " +
		"RSS converged / idle | heap idle | goroutines | connections | idle requests /cluster/min (watches) | management /cluster/min | CPU per drift interval | " +
		"restart (applies, writes) | status commit: after last cluster, files, size | dashboard lines (summary, first row, problems) | API servers' RSS |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, run := range f.Runs {
		fleetRow(b, run)
	}
	b.WriteString("\n")
	fleetSlopes(b, f)
	reportFleetFlux(b, f)
	reportFleetShard(b, f.Shard)
	for _, run := range f.Runs {
		if run.Err != "" {
			fmt.Fprintf(b, "- %d clusters stopped: %s\n", run.Clusters, run.Err)
		}
	}
	b.WriteString("\n")
}

func lat(l Latency) string {
	s := fmt.Sprintf("%.1f / %.1f / %.1f s", l.P50, l.P99, l.Last)
	if l.Missing > 0 {
		s += fmt.Sprintf(" (%d missing)", l.Missing)
	}
	return s
}

func mgmtPerMinute(rows []RequestRow) float64 {
	n := 0.0
	for _, r := range rows {
		n += r.Count
	}
	return n
}

func fleetRow(b *strings.Builder, run FleetRun) {
	restart, status := "–", "–"
	if rs := run.Restart; rs != nil {
		restart = fmt.Sprintf("%s (%.0f, %d)", secs(rs.Secs), rs.Applies, sumWrites(rs.Writes))
	}
	dash := "–"
	if sc := run.Status; sc != nil {
		status = fmt.Sprintf("%s, %d, %s", secs(sc.Secs), sc.Files, mib(sc.TreeBytes))
		dash = fmt.Sprintf("%d (%d, %d, %s)", sc.DashboardLines, sc.SummaryLine, sc.TableLine, orNone(sc.ProblemsLine))
	}
	clusters := fmt.Sprint(run.Clusters)
	if len(run.Args) > 0 {
		clusters += " (`" + strings.Join(run.Args, " ") + "`)"
	}
	clusters += measuredNote(run.Measured)
	fmt.Fprintf(b, "| %s | %d | %s, %s | %s | %s | %s | %s / %s | %s | %d | %d | %.2f (%.2f) | %.2f | %s | %s | %s | %s | %s |\n",
		clusters, run.Servers, secs(run.ServersSecs), secs(run.UsersSecs), secs(run.StartSecs), lat(run.First), lat(run.Change),
		mib(run.Converged.RSS), mib(run.Idle.RSS), mib(run.Idle.HeapInuse), run.Idle.Goroutines, run.Idle.Conns,
		run.IdleOther, run.IdleWatches, mgmtPerMinute(run.IdleMgmt), secs(run.IdleCPUPerDrift), restart, status, dash, mib(run.APIServersRSS))
}

func orNone(line int) string {
	if line == 0 {
		return "none"
	}
	return fmt.Sprint(line)
}

// fleetSlopes are the per-cluster slopes between consecutive sizes.
func fleetSlopes(b *strings.Builder, f *FleetResult) {
	c := f.complete()
	if len(c) < 2 {
		return
	}
	b.WriteString("Per added cluster between consecutive sizes (the curves" + f.curvesNote() + "):\n\n| from → to | RSS | heap | goroutines | change, last cluster | change: regatta CPU | change: API servers' and etcd CPU | change: regatta allocated | restart |\n" +
		"|---|---|---|---|---|---|---|---|---|\n")
	for i := 1; i < len(c); i++ {
		a, z := c[i-1], c[i]
		d := float64(z.Clusters - a.Clusters)
		rs := "–"
		if a.Restart != nil && z.Restart != nil {
			rs = fmt.Sprintf("%.1f ms", 1000*(z.Restart.Secs-a.Restart.Secs)/d)
		}
		alloc := "–"
		if a.ChangeAlloc > 0 && z.ChangeAlloc > 0 {
			alloc = kib((z.ChangeAlloc - a.ChangeAlloc) / d)
		}
		fmt.Fprintf(b, "| %d → %d | %s | %s | %.1f | %.1f ms | %s | %s | %s | %s |\n", a.Clusters, z.Clusters, kib(float64(z.Idle.RSS-a.Idle.RSS)/d),
			kib(float64(z.Idle.HeapInuse-a.Idle.HeapInuse)/d), float64(z.Idle.Goroutines-a.Idle.Goroutines)/d,
			1000*(z.Change.Last-a.Change.Last)/d, cpuPer(a.ChangeCPU, z.ChangeCPU, d), cpuPer(a.ChangeServersCPU, z.ChangeServersCPU, d), alloc, rs)
	}
	b.WriteString("\nThe linearity target reads regatta's allocations and CPU in the change beside the API servers'; wall time is " +
		"shown, not judged (" + methods("fleet") + ").\n\n")
}

func reportCalibration(b *strings.Builder, f *FleetResult) {
	b.WriteString("**Calibration.** The same fleet of 10 logical clusters on 10 API servers, then on one:\n\n")
	if len(f.Calibration) != 2 {
		b.WriteString("Incomplete: " + fmt.Sprint(len(f.Calibration)) + " of 2 runs.\n\n")
		return
	}
	sep, one := calibrationRows(f.Calibration[0]), calibrationRows(f.Calibration[1])
	b.WriteString("| figure | 10 servers | 1 server | difference |\n|---|---|---|---|\n")
	for i, name := range calibrationNames {
		x, y := sep[i], one[i]
		if strings.Contains(name, "MiB") {
			x, y = x/(1<<20), y/(1<<20)
		}
		fmt.Fprintf(b, "| %s | %.2f | %.2f | %+.0f %% |\n", name, x, y, 100*(y-x)/x)
	}
	cs := f.Calibration
	fmt.Fprintf(b, "\nIdle window %s, drift interval %s. Runs with errors: %s.%s\n\n", secs(cs[0].IdleSecs), secs(cs[0].DriftSecs),
		orDashStr(strings.TrimSpace(cs[0].Err+" "+cs[1].Err)), measuredNote(cs[0].Measured))
	for _, run := range cs {
		fleetRowNote(b, run)
	}
	b.WriteString("\n")
}

func fleetRowNote(b *strings.Builder, run FleetRun) {
	fmt.Fprintf(b, "- %d clusters on %d servers: first rollout %s, change %s, RSS idle %s, restart %s\n", run.Clusters, run.Servers,
		lat(run.First), lat(run.Change), mib(run.Idle.RSS), restartFigure(run.Restart))
}

func restartFigure(rs *FleetRestart) string {
	if rs == nil {
		return "–"
	}
	return fmt.Sprintf("%s (%.0f applies, %d writes)", secs(rs.Secs), rs.Applies, sumWrites(rs.Writes))
}

func orDashStr(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func reportFleetShard(b *strings.Builder, s *FleetShard) {
	if s == nil {
		b.WriteString("**Shards.** Not measured in this run (`-fleet-shard 2000`).\n\n")
		return
	}
	fmt.Fprintf(b, "**Shards.** %d `regatta run --replicas-mode shard` (lease %s) share %d logical clusters: the whole fleet converged %s after they started; "+
		"a fleet-wide change, during which %s (owner of %d clusters, %d of them without the change yet) was SIGKILLed: the last of its clusters had the change %s after the kill; "+
		"the change reached every cluster at %s; clusters whose changed object was written more than once (audit logs): %d. Surviving replicas' RSS: %s.%s\n\n",
		s.Replicas, secs(s.LeaseSecs), s.Clusters, secs(s.ConvergeSecs), s.Victim, s.VictimOwned, s.Pending, secs(s.TakeoverSecs),
		lat(s.Change), s.Twice, rssList(s.RSS), measuredNote(s.Measured))
	if s.Twice > 0 {
		b.WriteString("The run's log names the replica and time of every write of a cluster written twice (" + methods("fleet") + ").\n\n")
	}
}

func rssList(xs []int64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, mib(x))
	}
	return strings.Join(parts, ", ")
}
