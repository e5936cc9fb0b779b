package bench

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Report renders REPORT.md from a run's results: today's figure of each
// target first, then each phase's figures under one line of method that
// links to METHODS.md, which holds the method in full (a reader finds a
// figure in one screen; TestReportShape keeps that shape).
func Report(r *Results) string {
	var b strings.Builder
	reportHeader(&b, r)
	reportTargets(&b, r)
	reportPhases(&b, r)
	reportRollout(&b, r)
	reportSteady(&b, r)
	reportProgressive(&b, r)
	reportHealth(&b, r)
	reportScale(&b, r)
	reportMemory(&b, r)
	reportGoBench(&b, r)
	reportShard(&b, r)
	reportFleet(&b, r)
	reportSoak(&b, r)
	reportProfiles(&b, r)
	reportErrors(&b, r)
	b.WriteString("Every command (A/B runs, profiles, `-report-only`): [METHODS.md](METHODS.md#reproduce).\n")
	return b.String()
}

// methods links to a section of METHODS.md.
func methods(anchor string) string { return "[method](METHODS.md#" + anchor + ")" }

// how is a section's one line of method, with its link to METHODS.md.
func how(b *strings.Builder, line, anchor string) {
	fmt.Fprintf(b, "%s (%s).\n\n", line, methods(anchor))
}

func reportHeader(b *strings.Builder, r *Results) {
	m := r.Machine
	fmt.Fprintf(b, "# regatta benchmark report\n\n")
	fmt.Fprintf(b, "Today's figure of each target; how each is measured: [METHODS.md](METHODS.md), earlier figures: "+
		"[CHANGELOG.md](CHANGELOG.md). Last run %s at `%s` (%s), %s, load %s → %s; options %s; raw: `internal/bench/results/`.\n\n",
		r.Started.UTC().Format("2006-01-02 15:04 UTC"), m.Commit, r.Finished.Sub(r.Started).Round(time.Second),
		machine(m), m.LoadStart, m.LoadEnd, formatOptions(r.Options))
}

func machine(m Machine) string {
	return fmt.Sprintf("%d CPUs (%s), %.1f GiB, %s, %s", m.CPUs, m.CPUModel, float64(m.MemBytes)/(1<<30), m.Kernel, m.GoVersion)
}

func formatOptions(o map[string]string) string {
	keys := []string{"phases", "rounds", "serialEvery", "changes", "clusters", "profiles", "scale", "benchCount"}
	var parts []string
	for _, k := range keys {
		if v, ok := o[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return "`" + strings.Join(parts, " ") + "`"
}

// target is one line of the targets table.
type target struct {
	name, figure, how string
	met               *bool
	// info marks a figure shown beside a target, judged by none.
	info bool
}

func met(ok bool) *bool { return &ok }

func (t target) verdict() string {
	switch {
	case t.info:
		return "(information)"
	case t.met == nil:
		return "not measured"
	case *t.met:
		return "**met**"
	}
	return "**missed**"
}

func reportTargets(b *strings.Builder, r *Results) {
	b.WriteString("## Targets\n\n| target | figure | verdict | measured by | commit | date |\n|---|---|---|---|---|---|\n")
	noted := map[string]bool{}
	for _, t := range targets(r) {
		run := r.Run(t.phase())
		fig := t.figure
		if run.Later != "" && !noted[t.phase()] {
			fig += "; **a later run**: " + run.Later
			noted[t.phase()] = true
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | `%s` | %s |\n", t.name, fig, t.verdict(),
			t.how, run.Commit, run.Date.UTC().Format("2006-01-02"))
	}
	b.WriteString("\n")
}

// phaseRows are the phases the targets name, in the report's order, with
// the anchor of their method in METHODS.md.
var phaseRows = []struct{ phase, anchor string }{
	{"rollout", "rollout"}, {"daemon", "steady-state-and-drift"}, {"scale", "scale"}, {"shard", "shards"},
	{"health", "real-health"}, {"fleet", "fleet"},
}

// reportPhases gives, once per phase, the command that measures its
// targets again and where it was last measured.
func reportPhases(b *strings.Builder, r *Results) {
	b.WriteString("| phase | command | commit | date | how |\n|---|---|---|---|---|\n")
	for _, p := range phaseRows {
		run := r.Run(p.phase)
		fmt.Fprintf(b, "| %s | `%s` | `%s` | %s | %s |\n", p.phase, phaseCommand(r, p.phase), run.Commit,
			run.Date.UTC().Format("2006-01-02"), methods(p.anchor))
	}
	b.WriteString("\n")
}

// phase is the benchmark phase that measures t: the first word of how
// ("rollout phase (§1)").
func (t target) phase() string {
	p, _, _ := strings.Cut(t.how, " ")
	return p
}

// phaseCommand is the command that measures phase's targets again.
func phaseCommand(r *Results, phase string) string {
	cmd := "go run ./internal/bench/cmd/regatta-bench -phases " + phase
	switch phase {
	case "rollout":
		if n := r.Options["rounds"]; n != "" {
			cmd += " -rounds " + n
		}
	case "health":
		if r.Health != nil {
			cmd += fmt.Sprintf(" -rounds %d", len(r.Health.Rounds))
		}
		cmd += " -flux-kustomize-controller PATH"
	case "scale":
		cmd += " -scale 10000"
	case "fleet":
		flags := map[string]string{"fleet": "fleet", "fleetIdle": "fleet-idle", "fleetDriftInterval": "fleet-drift-interval",
			"fleetCalibrate": "fleet-calibrate", "fleetFlux": "fleet-flux"}
		for _, k := range []string{"fleet", "fleetIdle", "fleetDriftInterval", "fleetCalibrate", "fleetFlux"} {
			if v := r.Options[k]; v != "" {
				cmd += " -" + flags[k] + " " + v
			}
		}
		if r.Options["fleetFlux"] != "" {
			cmd += " -flux-kustomize-controller PATH"
		}
	}
	return cmd
}

func targets(r *Results) []target {
	out := rolloutTargets(r)
	out = append(out, steadyTargets(r)...)
	out = append(out, scaleTargets(r)...)
	out = append(out, shardTargets(r)...)
	out = append(out, healthTargets(r)...)
	out = append(out, fleetTargets(r)...)
	return append(out, memoryTargets(r)...)
}

// floorFigure tells where the floor (the minimal program with regatta's
// bookkeeping) stood in the same run, when it was measured.
func floorFigure(r *Results, reg, lim float64) string {
	fl := Quantile(r.Secs(MethodFloor), .5)
	if math.IsNaN(fl) {
		return ""
	}
	return fmt.Sprintf("; the floor took %s the minimal program's time, regatta %s the floor's", ratio(fl/lim), ratio(reg/fl))
}

func rolloutTargets(r *Results) []target {
	how := "rollout phase (§1)"
	reg, lim, xa := Quantile(r.Secs(MethodRegatta), .5), Quantile(r.Secs(MethodLimit), .5), Quantile(r.Secs(MethodXargs), .5)
	chg := Quantile(r.Secs(MethodChange), .5)
	paired := Quantile(r.PairedRatios(MethodRegatta, MethodLimit), .5)
	ts := []target{
		{name: "first rollout, 10 clusters × 10 profiles: ≤ 1.10× the minimal program", how: how,
			figure: fmt.Sprintf("%s / %s = %s (median of per-round ratios %s)%s", secs(reg), secs(lim), ratio(reg/lim), ratio(paired), floorFigure(r, reg, lim))},
		{name: "first rollout: ≥ 3× faster than the parallel script (xargs -P 10)", how: how,
			figure: fmt.Sprintf("%s / %s = %s faster", secs(xa), secs(reg), ratio(xa/reg))},
		{name: "one-overlay change converges in < 2 s (p50)", how: how, figure: secs(chg) + " p50"},
	}
	ts = append(ts, restartTargets(r, reg)...)
	ts = append(ts, stuckTargets(r, chg)...)
	ts = append(ts, eventTargets(r)...)
	if !math.IsNaN(reg) && !math.IsNaN(lim) {
		ts[0].met = met(reg/lim <= 1.10)
	}
	if !math.IsNaN(reg) && !math.IsNaN(xa) {
		ts[1].met = met(xa/reg >= 3)
	}
	if !math.IsNaN(chg) {
		ts[2].met = met(chg < 2)
	}
	return ts
}

func steadyTargets(r *Results) []target {
	how := "daemon phase (§2)"
	ts := []target{
		{name: "steady state: 0 write requests per cluster per drift interval", how: how, figure: "–"},
		{name: "steady state: reads bounded by the managed kinds", how: how, figure: "–"},
		{name: "drift corrected in < 2 s (p50)", how: how, figure: "–"},
	}
	s := r.Steady
	if s == nil || s.Intervals == 0 || len(s.Regatta)+len(s.Control) == 0 {
		return ts
	}
	writes, reads := s.Totals()
	ts[0].figure, ts[0].met = fmt.Sprintf("%.1f writes", writes), met(writes == 0)
	ts[1].figure = fmt.Sprintf("%.1f reads (dry runs included) vs %d managed kinds", reads, s.ManagedKinds)
	ts[1].met = met(reads <= float64(s.ManagedKinds))
	if d := driftSecs(s.Drift); len(d) > 0 {
		p50 := Quantile(d, .5)
		ts[2].figure = fmt.Sprintf("%s p50, %s max (%d of %d restored)", secs(p50), secs(Quantile(d, 1)), len(d), len(s.Drift))
		ts[2].met = met(p50 < 2 && len(d) == len(s.Drift))
	}
	return ts
}

func driftSecs(ds []DriftTime) []float64 {
	var out []float64
	for _, d := range ds {
		if d.Err == "" {
			out = append(out, d.Secs)
		}
	}
	return out
}

func scaleTargets(r *Results) []target {
	how := "scale phase (§3)"
	ts := []target{
		{name: "10,000 clusters × 20 profiles planned and rendered in < 60 s", how: how, figure: "–"},
		{name: "… using < 2 GiB peak memory", how: how, figure: "–"},
	}
	tp := []target{
		{name: "10,000 clusters × 20 profiles with templated paths planned in < 60 s", how: how, figure: "–"},
		{name: "… using < 2 GiB peak memory", how: how, figure: "–"},
	}
	for _, s := range r.Scale {
		if s.Clusters != 10000 {
			continue
		}
		total := s.LoadSecs + s.PlanSecs
		switch s.Style {
		case StyleMixed, "":
			ts[0].figure, ts[0].met = secs(total), met(total < 60)
			ts[1].figure, ts[1].met = mib(s.PeakRSS)+" VmHWM", met(s.PeakRSS < 2<<30)
		case StyleTemplatedPaths:
			tp[0].figure, tp[0].met = secs(total), met(total < 60)
			tp[1].figure, tp[1].met = mib(s.PeakRSS)+" VmHWM", met(s.PeakRSS < 2<<30)
		}
	}
	return append(append(ts, tp...), templatedPathTargets(r)...)
}

// templatedPathTargets compare templated paths with overlays: at each
// size, within 1.5× in time and in peak memory.
func templatedPathTargets(r *Results) []target {
	var out []target
	by := map[string]map[int]ScaleResult{}
	for _, s := range r.Scale {
		if by[s.Style] == nil {
			by[s.Style] = map[int]ScaleResult{}
		}
		by[s.Style][s.Clusters] = s
	}
	for _, n := range slices.Sorted(maps.Keys(by[StyleTemplatedPaths])) {
		tp := by[StyleTemplatedPaths][n]
		ov, ok := by[StyleOverlays][n]
		if !ok {
			continue
		}
		tt, ot := tp.LoadSecs+tp.PlanSecs, ov.LoadSecs+ov.PlanSecs
		out = append(out, target{
			name:   fmt.Sprintf("%d clusters: templated paths within 1.5× of overlays: (time, memory)", n),
			how:    "scale phase (§3)",
			figure: fmt.Sprintf("%.2f×, %.2f×", tt/ot, float64(tp.PeakRSS)/float64(ov.PeakRSS)),
			met:    met(tt <= 1.5*ot && float64(tp.PeakRSS) <= 1.5*float64(ov.PeakRSS)),
		})
	}
	return out
}

func memoryTargets(r *Results) []target {
	t := target{name: "memory per managed cluster < 10 MiB", how: "daemon phase (§4)", figure: "–"}
	if s := r.Steady; s != nil && s.Memory.RSS > 0 {
		per := s.Memory.Total() / int64(s.Memory.ClustersIn)
		t.figure = fmt.Sprintf("%s RSS / %d = %s", mib(s.Memory.Total()), s.Memory.ClustersIn, mib(per))
		t.met = met(per < 10<<20)
	}
	return []target{t}
}

func secs(s float64) string {
	if math.IsNaN(s) {
		return "–"
	}
	return fmt.Sprintf("%.2f s", s)
}

func ratio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	return fmt.Sprintf("%.2f×", x)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// restartTargets: a fresh daemon on an applied, unchanged fleet.
func restartTargets(r *Results, first float64) []target {
	how := "rollout phase (§1), regatta-restart"
	rs := Quantile(r.Secs(MethodRestart), .5)
	w, n := 0.0, 0
	for _, s := range r.Samples {
		if s.Method == MethodRestart && s.Err == "" {
			w += applies(s.Requests)
			n++
		}
	}
	if n == 0 {
		w = math.NaN()
	}
	ts := []target{
		{name: "restart on an unchanged fleet: 0 apply requests", how: how, figure: fmt.Sprintf("%.0f apply requests per cluster, all rounds", w)},
		{name: "restart on an unchanged fleet: ≤ 0.2× the first rollout", how: how,
			figure: fmt.Sprintf("%s / %s = %s", secs(rs), secs(first), ratio(rs/first))},
	}
	if !math.IsNaN(w) {
		ts[0].met = met(w == 0)
	}
	if !math.IsNaN(rs) && !math.IsNaN(first) {
		ts[1].met = met(rs/first <= 0.2)
	}
	return ts
}

// stuckTargets: one cluster of ten stuck on an add-on that never becomes
// healthy.
func stuckTargets(r *Results, change float64) []target {
	how := "rollout phase (§1), stuck-*"
	others, own, st := Quantile(r.Secs(MethodStuckOthers), .5), Quantile(r.Secs(MethodStuckOwn), .5), Quantile(r.Secs(MethodStuckStatus), .5)
	ts := []target{
		{name: "one cluster stuck: a change reaches the 9 others in < 2 s p50", how: how,
			figure: fmt.Sprintf("%s p50 (one-overlay change with none stuck: %s)", secs(others), secs(change))},
		{name: "one cluster stuck: the stuck cluster's other profile moves too (< 2 s p50)", how: how, figure: secs(own) + " p50"},
		{name: "one cluster stuck: the status branch records it within --status-interval + 2 s (bench: 1 s + 2 s)", how: how,
			figure: secs(st) + " p50"},
	}
	if !math.IsNaN(others) {
		ts[0].met = met(others < 2)
	}
	if !math.IsNaN(own) {
		ts[1].met = met(own < 2)
	}
	if !math.IsNaN(st) {
		ts[2].met = met(st < 3)
	}
	return ts
}

// applies totals the apply and patch requests (dry runs left out) of
// request rows: what regatta sends to apply, never the API server's own
// background writes.
func applies(rows []RequestRow) float64 {
	n := 0.0
	for _, row := range rows {
		if (row.Verb == "APPLY" || row.Verb == "PATCH") && row.DryRun == "" {
			n += row.Count
		}
	}
	return n
}
