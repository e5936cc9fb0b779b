package bench

import (
	"fmt"
	"math"
	"strings"
)

func reportRollout(b *strings.Builder, r *Results) {
	b.WriteString("## 1. Commit to converged on 10 real kube-apiservers\n\n")
	how(b, fmt.Sprintf("Each round: %s fresh kube-apiservers, %s profiles × %d objects per cluster, the methods in an order rotated by the round: "+
		"regatta (a daemon following a loopback Git server), `kubectl apply --server-side` scripts, the minimal program (16 server-side applies "+
		"in flight per cluster) and the floor (it plus regatta's bookkeeping); results verified afterwards",
		option(r, "clusters", "10"), option(r, "profiles", "10"), ObjectsPerProfile), "rollout")
	b.WriteString("| method | runs | p50 | p95 | min | max | p50 / minimal program |\n|---|---|---|---|---|---|---|\n")
	lim := Quantile(r.Secs(MethodLimit), .5)
	for _, m := range []string{MethodRegatta, MethodLimit, MethodFloor, MethodXargs, MethodSerial, MethodChange, MethodRestart,
		MethodStuckOthers, MethodStuckOwn, MethodStuckStatus, MethodEventApplied, MethodEventWithdrawn, MethodEventBurst} {
		xs := r.Secs(m)
		if len(xs) == 0 {
			continue
		}
		p50 := Quantile(xs, .5)
		rel := ratio(p50 / lim)
		if m != MethodRegatta && m != MethodLimit && m != MethodFloor && m != MethodXargs && m != MethodSerial && m != MethodRestart {
			rel = "–"
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s |\n", methodLabel(m), len(xs), secs(p50),
			secs(Quantile(xs, .95)), secs(Quantile(xs, 0)), secs(Quantile(xs, 1)), rel)
	}
	reg := Quantile(r.Secs(MethodRegatta), .5)
	xa, se := Quantile(r.Secs(MethodXargs), .5), Quantile(r.Secs(MethodSerial), .5)
	fmt.Fprintf(b, "\nRatios (p50 over p50): **regatta/minimal %s**, **regatta/script-xargs %s** (regatta %s faster), "+
		"regatta/script-serial %s (%s faster). Median of per-round ratios (same clusters, same round): "+
		"regatta/minimal %s, regatta/script-xargs %s.\n\n",
		ratio(reg/lim), ratio(reg/xa), ratio(xa/reg), ratio(reg/se), ratio(se/reg),
		ratio(Quantile(r.PairedRatios(MethodRegatta, MethodLimit), .5)),
		ratio(Quantile(r.PairedRatios(MethodRegatta, MethodXargs), .5)))
	if fl := Quantile(r.Secs(MethodFloor), .5); !math.IsNaN(fl) {
		fmt.Fprintf(b, "The minimal program with regatta's bookkeeping (the floor) took %s the minimal program's time "+
			"(per-round median %s); **regatta/floor %s** (per-round median %s).\n\n", ratio(fl/lim),
			ratio(Quantile(r.PairedRatios(MethodFloor, MethodLimit), .5)), ratio(reg/fl),
			ratio(Quantile(r.PairedRatios(MethodRegatta, MethodFloor), .5)))
	}
	reportCPU(b, r)
	reportRequests(b, r)
	reportRounds(b, r)
}

// option is an option of the run, or def when the results predate it.
func option(r *Results, key, def string) string {
	if v := r.Options[key]; v != "" {
		return v
	}
	return def
}

func methodLabel(m string) string {
	return map[string]string{
		MethodRegatta: "regatta, first rollout", MethodLimit: "minimal program (API servers' limit)",
		MethodFloor: "minimal program with regatta's bookkeeping (floor)",
		MethodXargs: "script, `xargs -P 10`", MethodSerial: "script, serial",
		MethodChange: "regatta, one overlay changed", MethodRestart: "regatta restarted on the unchanged fleet",
		MethodStuckOthers: "one cluster stuck: change on the 9 others", MethodStuckOwn: "one cluster stuck: change on the stuck cluster",
		MethodStuckStatus:  "one cluster stuck: change on the status branch",
		MethodEventApplied: "event: matching Service created to instance applied", MethodEventWithdrawn: "event: Service deleted to instance withdrawn",
		MethodEventBurst: "event: 1,000 matching resources to all instances applied",
	}[m]
}

// reportCPU shows what the machine's processes spent during each first
// rollout (mean over rounds): on this machine every process shares two
// cores, so the API servers' work for a method's requests is part of its
// time.
func reportCPU(b *strings.Builder, r *Results) {
	cols := []string{"machine", "kube-apiserver-", "etcd", "regatta-bench"}
	b.WriteString("CPU seconds during one first rollout (mean over rounds; `regatta-bench` runs regatta's daemon and the minimal programs):\n\n" +
		"| method | wall | machine (all processes) | API servers | etcd | bench process |\n|---|---|---|---|---|---|\n")
	for _, m := range []string{MethodRegatta, MethodLimit, MethodFloor} {
		sum, n, wall := CPUUse{}, 0, 0.0
		for _, s := range r.Samples {
			if s.Method == m && s.Err == "" && len(s.CPU) > 0 {
				for k, v := range s.CPU {
					sum[k] += v
				}
				wall += s.Secs
				n++
			}
		}
		if n == 0 {
			continue
		}
		row := []string{methodLabel(m), secs(wall / float64(n))}
		for _, c := range cols {
			row = append(row, fmt.Sprintf("%.1f s", sum[c]/float64(n)))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
	b.WriteString("\n")
}

// reportRounds lists every sample, a row per method and a column per
// round, in the order they were taken (regatta's own pass seconds in
// parentheses, an error in place of its seconds).
func reportRounds(b *strings.Builder, r *Results) {
	var methods []string
	rounds := 0
	cells := map[string]map[int][]string{}
	for _, s := range r.Samples {
		if cells[s.Method] == nil {
			cells[s.Method] = map[int][]string{}
			methods = append(methods, s.Method)
		}
		rounds = max(rounds, s.Round+1)
		cells[s.Method][s.Round] = append(cells[s.Method][s.Round], sampleCell(s))
	}
	b.WriteString("<details><summary>Every measurement (seconds)</summary>\n\n| method |")
	for i := range rounds {
		fmt.Fprintf(b, " round %d |", i)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", rounds) + "\n")
	for _, m := range methods {
		b.WriteString("| " + m + " |")
		for i := range rounds {
			b.WriteString(" " + strings.Join(cells[m][i], ", ") + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n</details>\n\n")
}

func sampleCell(s Sample) string {
	c := fmt.Sprintf("%.2f", s.Secs)
	if s.PassSecs > 0 {
		c += fmt.Sprintf(" (%.2f)", s.PassSecs)
	}
	if s.Err != "" {
		c += " error: " + strings.ReplaceAll(s.Err, "|", "/")
	}
	return c
}

func reportSteady(b *strings.Builder, r *Results) {
	s := r.Steady
	b.WriteString("## 2. Steady state and drift correction\n\n")
	if s == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	how(b, fmt.Sprintf("`bin/regatta run --drift-interval %.0fs` on %d fresh clusters × %d profiles (first pass converged %.1f s "+
		"after its start); requests over %d drift passes, less an idle control API server's, per cluster per drift interval",
		s.DriftInterval, s.Clusters, s.Profiles, s.FirstPassSecs, s.Intervals), "steady-state-and-drift")
	writes, reads := s.Totals()
	b.WriteString("| request | regatta | API server's own (control) |\n|---|---|---|\n")
	ctl := map[RequestKey]float64{}
	for _, c := range s.Control {
		ctl[c.RequestKey] = c.Count
	}
	for _, row := range s.Regatta {
		fmt.Fprintf(b, "| %s | %.1f | %.1f |\n", row.String(), row.Count, ctl[row.RequestKey])
	}
	fmt.Fprintf(b, "\nTotal: **%.1f writes**, **%.1f reads** (dry runs included) per cluster per interval; "+
		"the fleet manages %d kinds per cluster.", writes, reads, s.ManagedKinds)
	if s.IdleCPUSecs > 0 {
		fmt.Fprintf(b, " The daemon's CPU: **%.2f s per drift interval** for its %d clusters.", s.IdleCPUSecs, s.Clusters)
	}
	b.WriteString("\n\n")
	reportDrift(b, s)
}

func reportDrift(b *strings.Builder, s *SteadyResult) {
	d := driftSecs(s.Drift)
	fmt.Fprintf(b, "Drift correction, objects edited or deleted out of band until restored: p50 %s, p95 %s over %d of %d restored.\n\n",
		secs(Quantile(d, .5)), secs(Quantile(d, .95)), len(d), len(s.Drift))
	b.WriteString("| action | cluster | object | seconds | error |\n|---|---|---|---|---|\n")
	for _, x := range s.Drift {
		fmt.Fprintf(b, "| %s | %s | %s | %.3f | %s |\n", x.Action, x.Cluster, x.Object, x.Secs, x.Err)
	}
	b.WriteString("\n")
}

func reportScale(b *strings.Builder, r *Results) {
	b.WriteString("## 3. Fleet scale without servers\n\n")
	how(b, "Simulated clusters × 20 profiles, one child process per size: load, match and render cold, warm and after a one-overlay "+
		"change; peak memory is the child's VmHWM", "scale")
	b.WriteString("| style | clusters | pairs | objects | load | match + render (cold) | total | hits / misses | peak RSS | Go heap sys | allocated | warm pass | change pass (misses) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Scale {
		fmt.Fprintf(b, "| %s | %d | %d | %d | %s | %s | %s | %d / %d | %s | %s | %s | %s | %s (%d) |\n",
			s.Style, s.Clusters, s.Pairs, s.Objects, secs(s.LoadSecs), secs(s.PlanSecs), secs(s.LoadSecs+s.PlanSecs),
			s.Hits, s.Misses, mib(s.PeakRSS), mib(int64(s.HeapSys)), mib(int64(s.TotalAlloc)),
			secs(s.WarmSecs), secs(s.ChangeSecs), s.ChangeMisses)
	}
	b.WriteString("\n")
	if p := r.PlanCmd; p != nil {
		fmt.Fprintf(b, "`regatta plan` over %d clusters, one profile changed: %s, peak %s (`%s`). %s\n\n",
			p.Clusters, secs(p.Secs), mib(p.PeakRSS), p.Command, p.Note)
	}
	for _, p := range r.PlanCmds {
		fmt.Fprintf(b, "`regatta plan` over %d clusters, %s: %s, peak %s (`%s`). %s\n\n",
			p.Clusters, p.Style, secs(p.Secs), mib(p.PeakRSS), p.Command, p.Note)
	}
	if r.PlanCmd == nil && len(r.PlanCmds) == 0 {
		b.WriteString("`regatta plan` over 1,000 clusters: **not measured** — the command did not exist in this tree when the suite ran.\n\n")
	}
}

func reportMemory(b *strings.Builder, r *Results) {
	b.WriteString("## 4. Memory per managed cluster\n\n")
	s := r.Steady
	if s == nil || s.Memory.RSS == 0 {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	m := s.Memory
	how(b, "The daemon phase's `bin/regatta run`, read after its idle window", "memory-per-managed-cluster")
	fmt.Fprintf(b, "`bin/regatta run` managing %d clusters × %d profiles (%d objects): "+
		"VmRSS %s (peak %s), Go heap in use %s, chart render workers %d (%s RSS): **%s per cluster** "+
		"((VmRSS + workers) / %d).",
		m.ClustersIn, s.Profiles, m.ClustersIn*s.Profiles*ObjectsPerProfile, mib(m.RSS), mib(m.HWM), mib(m.HeapInuse),
		m.Workers, mib(m.WorkersRSS), mib(m.Total()/int64(m.ClustersIn)), m.ClustersIn)
	if m.Anon > 0 {
		fmt.Fprintf(b, " Of VmRSS, %s are anonymous and %s pages of the binary; the Go runtime "+
			"holds %s from the OS, %s of it goroutine stacks, and its next collection is due at a heap of %s.",
			mib(m.Anon), mib(m.RSS-m.Anon), mib(m.GoSys), mib(m.StackInuse), mib(m.NextGC))
	}
	if m.CPUSecs > 0 {
		fmt.Fprintf(b, " It used %.1f s of CPU from its start to this reading.", m.CPUSecs)
	}
	if args := r.Options["daemonArgs"]; args != "" {
		fmt.Fprintf(b, " Flags added to `regatta run`: `%s`.", args)
	}
	if m.RSSOne > 0 && m.ClustersIn > 1 {
		fmt.Fprintf(b, " The same binary managing one cluster: VmRSS %s, heap %s; the marginal cost of each further cluster is "+
			"%s RSS, %s heap.", mib(m.RSSOne), mib(m.HeapOne), mib((m.RSS-m.RSSOne)/int64(m.ClustersIn-1)),
			mib((m.HeapInuse-m.HeapOne)/int64(m.ClustersIn-1)))
	}
	b.WriteString("\n\n")
}

func reportGoBench(b *strings.Builder, r *Results) {
	b.WriteString("## 5. Go benchmarks of the hot functions\n\n")
	if len(r.GoBench) == 0 {
		b.WriteString("Not run.\n\n")
		return
	}
	how(b, "`go test -bench` in spec, reconciler/plan, render and reconciler/apply; medians, the full output in "+
		"`internal/bench/results/gobench.txt`", "go-benchmarks")
	b.WriteString("| package | benchmark | ns/op | B/op | allocs/op | runs |\n|---|---|---|---|---|---|\n")
	for _, g := range r.GoBench {
		fmt.Fprintf(b, "| %s | %s | %.0f | %.0f | %.0f | %d |\n", strings.TrimPrefix(g.Package, "github.com/regatta-dev/regatta/"),
			g.Name, g.NsPerOp, g.BytesPerOp, g.AllocsPerOp, g.Runs)
	}
	b.WriteString("\n")
}

func reportProfiles(b *strings.Builder, r *Results) {
	if len(r.Profiles) == 0 {
		return
	}
	b.WriteString("## Profiles\n\nCPU profiles taken during the run (`go tool pprof -top`, first lines):\n\n")
	for _, p := range r.Profiles {
		fmt.Fprintf(b, "### %s\n\n`%s`\n\n```\n%s```\n\n", p.What, p.Command, p.Top)
	}
}

func reportErrors(b *strings.Builder, r *Results) {
	if len(r.Errors) == 0 {
		return
	}
	b.WriteString("## Errors of this run\n\n")
	for _, e := range r.Errors {
		fmt.Fprintf(b, "- %s\n", e)
	}
	b.WriteString("\n")
}

// reportRequests shows, per method, the API requests per cluster that one
// measurement made (mean over rounds), the API servers' own included.
func reportRequests(b *strings.Builder, r *Results) {
	b.WriteString("API requests per cluster during one measurement (mean over rounds):\n\n")
	b.WriteString("| method | writes | reads (dry runs incl.) | largest |\n|---|---|---|---|\n")
	for _, m := range []string{MethodRegatta, MethodLimit, MethodFloor, MethodXargs, MethodSerial, MethodChange, MethodRestart} {
		sum, n := RequestCounts{}, 0
		for _, s := range r.Samples {
			if s.Method == m && s.Err == "" && len(s.Requests) > 0 {
				for _, row := range s.Requests {
					sum[row.RequestKey] += row.Count
				}
				n++
			}
		}
		if n == 0 {
			continue
		}
		mean := sum.Scale(1 / float64(n))
		w, rd := mean.Totals()
		var top []string
		for i, row := range mean.Rows() {
			if i == 6 {
				break
			}
			top = append(top, fmt.Sprintf("%s %.0f", row.String(), row.Count))
		}
		fmt.Fprintf(b, "| %s | %.0f | %.0f | %s |\n", methodLabel(m), w, rd, strings.Join(top, ", "))
	}
	b.WriteString("\n")
}
