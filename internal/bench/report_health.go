package bench

import (
	"fmt"
	"math"
	"strings"
)

// healthSecs returns a figure of a method's turns without error.
func (h *HealthResult) healthSecs(method string, of func(HealthSample) float64) []float64 {
	var out []float64
	for _, s := range h.Samples {
		if s.Method == method && s.Err == "" {
			out = append(out, of(s))
		}
	}
	return out
}

// pairedRatios returns, per round where both ran without error, a's Secs
// over b's.
func (h *HealthResult) pairedRatios(a, b string) []float64 {
	by := map[int]float64{}
	for _, s := range h.Samples {
		if s.Method == b && s.Err == "" && s.Secs > 0 {
			by[s.Round] = s.Secs
		}
	}
	var out []float64
	for _, s := range h.Samples {
		if d, ok := by[s.Round]; ok && s.Method == a && s.Err == "" {
			out = append(out, s.Secs/d)
		}
	}
	return out
}

func healthSampleSecs(s HealthSample) float64 { return s.Secs }

// healthTargets are issue 28's: regatta ≤ 1.15× the minimal program and
// faster than Flux, commit to every Deployment Available.
func healthTargets(r *Results) []target {
	h := r.Health
	if h == nil {
		return nil
	}
	how := "health phase"
	reg := Quantile(h.healthSecs(MethodHealthRegatta, healthSampleSecs), .5)
	lim := Quantile(h.healthSecs(MethodHealthMinimal, healthSampleSecs), .5)
	flux := Quantile(h.healthSecs(MethodHealthFlux, healthSampleSecs), .5)
	pushed := Quantile(h.healthSecs(MethodHealthRegatta, func(s HealthSample) float64 { return s.Secs - s.CommitSecs }), .5)
	ts := []target{
		{name: fmt.Sprintf("commit to every Deployment Available, %d clusters with controllers × %d profiles: ≤ 1.15× the minimal program", h.Clusters, h.Profiles),
			how: how, figure: fmt.Sprintf("%s / %s = %s (median of per-round ratios %s)", secs(reg), secs(lim), ratio(reg/lim),
				ratio(Quantile(h.pairedRatios(MethodHealthRegatta, MethodHealthMinimal), .5)))},
		{name: "the same, regatta timed from its pushed commit (the bench's own commit and push left out)",
			how: how, figure: fmt.Sprintf("%s / %s = %s", secs(pushed), secs(lim), ratio(pushed/lim)), info: true},
		{name: "the same: faster than Flux's kustomize-controller (wait: true)", how: how,
			figure: fmt.Sprintf("%s / %s = %s (median of per-round ratios %s)", secs(reg), secs(flux), ratio(reg/flux),
				ratio(Quantile(h.pairedRatios(MethodHealthRegatta, MethodHealthFlux), .5)))},
	}
	if !math.IsNaN(reg) && !math.IsNaN(lim) {
		ts[0].met = met(reg/lim <= 1.15)
	}
	if !math.IsNaN(reg) && !math.IsNaN(flux) {
		ts[2].met = met(reg < flux)
	}
	return ts
}

func reportHealth(b *strings.Builder, r *Results) {
	h := r.Health
	if h == nil || len(h.Samples) == 0 {
		return
	}
	b.WriteString("## Real health: commit to every Deployment Available (issue 28)\n\n")
	fmt.Fprintf(b, healthHow, h.Clusters, h.Profiles, h.Replicas, h.FluxConcurrent)
	b.WriteString("| method | commit to all Available (p50) | min | max | own \"all healthy\" (p50) | apply alone (p50) | turns |\n|---|---|---|---|---|---|---|\n")
	for _, m := range []string{MethodHealthRegatta, MethodHealthMinimal, MethodHealthFlux} {
		xs := h.healthSecs(m, healthSampleSecs)
		if len(xs) == 0 {
			continue
		}
		ready := Quantile(h.healthSecs(m, func(s HealthSample) float64 { return s.ReadySecs }), .5)
		applied := Quantile(h.healthSecs(m, func(s HealthSample) float64 { return s.AppliedSecs }), .5)
		if m != MethodHealthMinimal {
			applied = math.NaN()
		} else {
			ready = math.NaN()
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %d |\n", m, secs(Quantile(xs, .5)), secs(Quantile(xs, 0)), secs(Quantile(xs, 1)),
			secs(ready), secs(applied), len(xs))
	}
	b.WriteString("\n| round | order | clusters started in (all turns) | CPU busy before a turn, highest: machine / the clusters (cores) | turns |\n|---|---|---|---|---|\n")
	for _, rd := range h.Rounds {
		var turns []string
		for _, s := range h.Samples {
			if s.Round == rd.Round {
				turns = append(turns, healthTurn(s))
			}
		}
		fmt.Fprintf(b, "| %d | %s | %s | %.2f / %.2f | %s |\n", rd.Round, strings.Join(rd.Order, ", "), secs(rd.StartSecs),
			rd.IdleCores, rd.ClusterIdleCores, strings.Join(turns, "; "))
	}
	b.WriteString("\n")
}

// healthTurn describes one turn for the rounds table.
func healthTurn(s HealthSample) string {
	if s.Err != "" {
		return s.Method + " error: " + s.Err
	}
	parts := []string{"available " + secs(s.AvailableSecs)}
	if s.ReadySecs > 0 {
		parts = append(parts, "own all healthy "+secs(s.ReadySecs))
	}
	if s.AppliedSecs > 0 {
		parts = append(parts, "apply "+secs(s.AppliedSecs))
	}
	if s.SourceSecs > 0 {
		parts = append(parts, "commit to fetched "+secs(s.SourceSecs))
	}
	if s.CommitSecs > 0 {
		parts = append(parts, "of which the bench's commit and push "+secs(s.CommitSecs))
	}
	if s.ClusterStartSecs > 0 {
		parts = append(parts, fmt.Sprintf("idle before: %.2f / %.2f cores", s.IdleCores, s.ClusterIdleCores))
	}
	return fmt.Sprintf("%s %s (%s)", s.Method, secs(s.Secs), strings.Join(parts, ", "))
}

const healthHow = `Every method's turn starts %d fresh v1.37 clusters of its own with kube-controller-manager, kube-scheduler
and kwok (3 simulated nodes each; before 2026-12-02's session 12, the methods of a round shared one set, and
whichever went first paid for the clusters' first writes); every method applies the same fleet: %d profiles per
cluster, each a Kustomize overlay (by the cluster's variant label) of a Namespace, 29 small objects
and a Deployment of %d replicas (image ` + "`registry.test/app:1`" + `, which kwok runs). The methods take
turns in an order rotated per round. Timed from the commit until the bench's own poll (every 100 ms,
the same for every method) sees every Deployment on every cluster Available (observedGeneration
current, every replica updated and available, condition Available True):

- **regatta**: an in-process daemon (as ` + "`regatta run`" + ` wires it, default options, built-in health, no
  Lua) follows a loopback Git server holding the clusters only and has finished its first pass; timed
  from the commit of the profiles (commit and push) and a trigger as a push webhook makes it. "Own
  all healthy" is when the daemon's pass of that commit settled with every pair healthy (its health
  poll runs every 2 s).
- **minimal program**: the fleet rendered beforehand (untimed); server-side apply of every object,
  Namespaces first, all clusters at once, 16 requests in flight per cluster; the poll starts with it.
- **Flux**: kustomize-controller built from its repository, on a management kube-apiserver of its own
  (started in Flux's turn, untimed), one Kustomization per cluster and profile (` + "`wait: true`" + `,
  ` + "`prune: true`" + `, ` + "`spec.kubeConfig`" + ` to the cluster), ` + "`--concurrent=%d`" + `. No source-controller:
  the bench serves the artifact tarball and writes it into the GitRepository's status. The
  Kustomizations first apply an empty revision (untimed); timed from writing the fleet's artifact
  into the status until every Kustomization is Ready at it and every Deployment Available (the
  later of both; "own all healthy" is the Kustomizations alone; its health checks poll every 5 s).

`
