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
	how(b, fmt.Sprintf("Each method's turn: %d fresh clusters with controllers and kwok, %d profiles per cluster with a Deployment of %d "+
		"replicas each; timed from the commit until every Deployment is Available; Flux's kustomize-controller at `--concurrent=%d`, "+
		"`wait: true`", h.Clusters, h.Profiles, h.Replicas, h.FluxConcurrent), "real-health")
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
