package bench

import (
	"fmt"
	"math"
	"strings"
)

func reportRollout(b *strings.Builder, r *Results) {
	b.WriteString("## 1. Commit to converged on 10 real kube-apiservers\n\n")
	b.WriteString(rolloutHow)
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

const rolloutHow = `Each round starts 10 fresh kube-apiservers (testenv, one shared etcd on /dev/shm) and runs the
methods one after the other in an order rotated by the round, each in namespaces of its own
(300 objects per cluster and method, so an API server holds at most ~1,200 objects). The fleet
is generated: 10 profiles per cluster, every profile 30 objects (a Namespace, 13 ConfigMaps,
4 Services, 4 ServiceAccounts, 3 Roles, 3 RoleBindings, 2 Secrets), 3 plain-YAML profiles,
4 Kustomize profiles with 3 overlays chosen by a cluster label, 3 Helm profiles installing a
chart from a loopback chart repository (values overlays by label); 3 of the 10 profiles are
ContinuousWithDriftDetection.

- **regatta**: an in-process daemon wired as ` + "`regatta run`" + ` wires it (default apply options,
  status commits to ` + "`regatta/status`" + `) following a real Git repository on a loopback Git server
  (fluxcd gittestserver, HTTP basic auth). First rollout: from starting the daemon (which fetches the
  commit at once) to the moment the fleet settled with every pair Applied (status is committed within
  ` + "`--status-interval`" + `). Change: a commit that edits one overlay of one Kustomize profile (3-4 clusters
  affected) is pushed, then the daemon is triggered as a push webhook would; timed from the trigger to
  the fleet settling. Restart: the daemon is stopped and a fresh one started on the unchanged fleet;
  timed from its start to the fleet settling, its apply requests counted. One cluster stuck: a
  profile whose Deployment never becomes healthy (health timeout 5m) is added on the first cluster,
  with a probe profile on all ten; a commit changing the probe is timed, from the trigger, until each
  cluster holds it (polled every 50 ms) and until the status branch records the new revision for
  every cluster (status interval 1 s, polled every 200 ms). Events (issue 13), on the same daemon: an
  event profile on every cluster (one ConfigMap per labelled Service of a namespace); a Service is
  created on all ten clusters at once and timed until its ConfigMap exists, then deleted and timed until
  it is gone (polled every 20 ms); then 1,000 matching ConfigMaps are created at once (8 in flight) on the
  first cluster and timed until all 1,000 instances are applied, counting the pair's apply requests.
- **script**: one shell command per (cluster, profile): ` + "`kubectl apply --server-side -f DIR`" + ` (plain),
  ` + "`kubectl apply --server-side -k OVERLAY`" + ` (Kustomize), ` + "`regatta render --cluster C --profile P DIR | kubectl apply --server-side -f -`" + `
  (Helm: regatta's renderer stands in for ` + "`helm template`" + `, no helm binary here), run by
  ` + "`xargs -P 10`" + ` and serially (` + "`xargs -P 1`" + `, every other round); kubectl is bin/kubectl (k8s 1.37), HOME fresh.
- **minimal program**: the objects rendered beforehand (untimed); all clusters at once, Namespaces
  first, then everything else with 16 server-side applies in flight per cluster; nothing else.
- **minimal program with regatta's bookkeeping (the floor)**: the minimal program plus what regatta's
  guarantees make any implementation send, at the same 16 in flight: an inventory ConfigMap per pair
  written before anything is created and again when done (regatta's shape and size), regatta's three
  ownership labels and tier annotation on every object, and a list and a watch per kind on the objects
  of the three ContinuousWithDriftDetection profiles, whose events are decoded. No rendering, no
  health, no status. What regatta takes beyond it is regatta's own code.

Every method's result is verified afterwards (untimed): each cluster holds the 30 objects of every profile.

`

// reportCPU shows what the machine's processes spent during each first
// rollout (mean over rounds): on this machine every process shares two
// cores, so the API servers' work for a method's requests is part of its
// time.
func reportCPU(b *strings.Builder, r *Results) {
	cols := []string{"machine", "kube-apiserver-", "etcd", "regatta-bench"}
	b.WriteString("CPU seconds during one first rollout (mean over rounds; /proc, by process; `regatta-bench` is the " +
		"bench process, which runs regatta's daemon and the minimal programs in-process):\n\n" +
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

func reportRounds(b *strings.Builder, r *Results) {
	b.WriteString("<details><summary>Every measurement</summary>\n\n| round | method | seconds | pass seconds | error |\n|---|---|---|---|---|\n")
	for _, s := range r.Samples {
		pass := ""
		if s.PassSecs > 0 {
			pass = fmt.Sprintf("%.2f", s.PassSecs)
		}
		fmt.Fprintf(b, "| %d | %s | %.2f | %s | %s |\n", s.Round, s.Method, s.Secs, pass, s.Err)
	}
	b.WriteString("\n</details>\n\n")
}

func reportSteady(b *strings.Builder, r *Results) {
	s := r.Steady
	b.WriteString("## 2. Steady state and drift correction\n\n")
	if s == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	fmt.Fprintf(b, "`bin/regatta run` (a child process, default flags but `--drift-interval %.0fs`) on %d fresh clusters, "+
		"the same generated fleet (%d profiles). Its first pass converged %.1f s after it started. "+
		"Requests are read from each kube-apiserver's own `apiserver_request_total` (GET /metrics as admin) "+
		"right after a drift pass and again %d drift passes later; an 11th API server that nobody talks to "+
		"gives the API servers' own background, which is subtracted. Per managed cluster per drift interval:\n\n",
		s.DriftInterval, s.Clusters, s.Profiles, s.FirstPassSecs, s.Intervals)
	writes, reads := s.Totals()
	b.WriteString("| request | regatta | API server's own (control) |\n|---|---|---|\n")
	ctl := map[RequestKey]float64{}
	for _, c := range s.Control {
		ctl[c.RequestKey] = c.Count
	}
	for _, row := range s.Regatta {
		fmt.Fprintf(b, "| %s | %.1f | %.1f |\n", row.String(), row.Count, ctl[row.RequestKey])
	}
	fmt.Fprintf(b, "\nTotal: **%.1f writes**, **%.1f reads** (dry-run applies counted as reads) per cluster per interval; "+
		"the fleet manages %d kinds per cluster. Rows that the idle control API server has too (its own lease "+
		"renewals, whose count in a window jitters by one) are left out of the totals.", writes, reads, s.ManagedKinds)
	if s.IdleCPUSecs > 0 {
		fmt.Fprintf(b, " In the same window the daemon used **%.2f s of CPU per drift interval** (user and system, "+
			"/proc/<pid>/stat) for its %d clusters.", s.IdleCPUSecs, s.Clusters)
	}
	b.WriteString("\n\n")
	reportDrift(b, s)
}

func reportDrift(b *strings.Builder, s *SteadyResult) {
	d := driftSecs(s.Drift)
	fmt.Fprintf(b, "Drift correction: ConfigMaps of the ContinuousWithDriftDetection profiles edited (Update by another "+
		"field manager) or deleted out of band, one at a time; timed from the API server's answer to the watch event "+
		"that shows the object restored. p50 %s, p95 %s over %d of %d restored.\n\n",
		secs(Quantile(d, .5)), secs(Quantile(d, .95)), len(d), len(s.Drift))
	b.WriteString("| action | cluster | object | seconds | error |\n|---|---|---|---|---|\n")
	for _, x := range s.Drift {
		fmt.Fprintf(b, "| %s | %s | %s | %.3f | %s |\n", x.Action, x.Cluster, x.Object, x.Secs, x.Err)
	}
	b.WriteString("\n")
}

func reportScale(b *strings.Builder, r *Results) {
	b.WriteString("## 3. Fleet scale without servers\n\n")
	b.WriteString("Simulated clusters (facts from cluster.yaml only) × 20 profiles (the same generator: plain, " +
		"Kustomize with 3 overlays, Helm with 3 values overlays), one child process per size (`regatta-bench scale-child`). " +
		"Cold: a fresh renderer, `spec.Load`, then `plan.Match` and `render.Render` of every pair through the cache " +
		"(2 workers). Warm: the same revision again. Change: a new revision in which one overlay of one profile changed. " +
		"Peak memory is the child's VmHWM after the cold plan.\n\n")
	b.WriteString("Styles: mixed is that generator; overlays and templated-paths make every profile Kustomize, " +
		"picking the overlay by `overlays:` or by a path templated on the variant label; template-label and " +
		"template-name make every profile `template: true` manifests reading one label or the cluster's name.\n\n")
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
	fmt.Fprintf(b, "`bin/regatta run` managing %d clusters × %d profiles (%d objects), after the idle window: "+
		"VmRSS %s (peak %s), Go heap in use %s, chart render workers %d (%s RSS): **%s per cluster** "+
		"((VmRSS + workers) / %d).",
		m.ClustersIn, s.Profiles, m.ClustersIn*s.Profiles*ObjectsPerProfile, mib(m.RSS), mib(m.HWM), mib(m.HeapInuse),
		m.Workers, mib(m.WorkersRSS), mib(m.Total()/int64(m.ClustersIn)), m.ClustersIn)
	if m.Anon > 0 {
		fmt.Fprintf(b, " Of VmRSS, %s are anonymous (heap, stacks, runtime) and %s pages of the binary (RssFile + RssShmem: "+
			"the suite runs it from tmpfs); the Go runtime "+
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
	b.WriteString("`go test -run '^$' -bench <pattern> -benchmem -count N` in spec, reconciler/plan, render and " +
		"reconciler/apply; medians below, the full output (for `benchstat`) in `internal/bench/results/gobench.txt`.\n\n")
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
	b.WriteString("API requests per cluster during one measurement (each API server's `apiserver_request_total` " +
		"before and after, mean over rounds; the API server's own few background requests included):\n\n")
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
