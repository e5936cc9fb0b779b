package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// soakSeries are the series the verdict judges: name, unit and value.
var soakSeries = []struct {
	name, unit string
	value      func(SoakSample) float64
}{
	{"RSS", "bytes", func(s SoakSample) float64 { return float64(s.RSS) }},
	{"Go heap in use", "bytes", func(s SoakSample) float64 { return float64(s.HeapInuse) }},
	{"goroutines", "", func(s SoakSample) float64 { return float64(s.Goroutines) }},
	{"open file descriptors", "", func(s SoakSample) float64 { return float64(s.FDs) }},
	{"API server connections", "", func(s SoakSample) float64 { return float64(s.Conns) }},
	{"clone on disk", "bytes", func(s SoakSample) float64 { return float64(s.CloneBytes) }},
	{"fleet repository on the Git server", "bytes", func(s SoakSample) float64 { return float64(s.UpstreamBytes) }},
	{"watches on the API servers", "", func(s SoakSample) float64 { return s.Watches }},
	{"requests per cluster per minute", "", func(s SoakSample) float64 { return s.Requests }},
}

// judge fits each series and runs the correctness checks.
func (s *soakRun) judge(ctx context.Context) {
	r := s.res
	r.mu.Lock()
	defer r.mu.Unlock()
	ts := make([]float64, len(r.Samples))
	for i, sm := range r.Samples {
		ts[i] = sm.At
	}
	for _, se := range soakSeries {
		ys := make([]float64, len(r.Samples))
		for i, sm := range r.Samples {
			ys[i] = se.value(sm)
		}
		r.Trends = append(r.Trends, NewTrend(se.name, se.unit, ts, ys, s.o.Duration))
	}
	r.Drift.summarize()
	r.Status = s.st.result()
	r.EventRes.summarize()
	r.Checks = append(r.Checks, commitCheck(r.Commits, s.convergeBound()), statusCheck(r.Status), driftCheck(r.Drift))
	if s.o.EventEvery > 0 {
		r.Checks = append(r.Checks, eventCheck(r.EventRes))
	}
	m, err := s.fr.child.Metrics(ctx)
	if err != nil {
		r.Checks = append(r.Checks, SoakCheck{Name: "nothing applied twice", Detail: err.Error()})
		return
	}
	r.Drift.Corrections = sumSeries(m, "regatta_drift_corrections_total{")
	r.Applies = soakApplies(m, float64(s.repo.gen), float64(s.repo.returns), s.repo.spare(), r.EventRes.perCluster)
	r.Checks = append(r.Checks, r.Applies.check())
}

// commitCheck: every commit reached the status branch on every cluster
// within the bound.
func commitCheck(cs []SoakCommit, bound time.Duration) SoakCheck {
	c := SoakCheck{Name: "every commit converged", OK: len(cs) > 0}
	var secs []float64
	late := 0
	for _, x := range cs {
		secs = append(secs, x.Secs)
		if x.Behind > 0 {
			late++
			c.OK = false
		}
	}
	if len(cs) == 0 {
		c.Detail = "no commit finished"
		return c
	}
	c.Detail = fmt.Sprintf("%d commits, %d not on every cluster within %s; commit → status branch p50 %.1fs, max %.1fs",
		len(cs), late, bound, Quantile(secs, .5), Quantile(secs, 1))
	return c
}

// statusCheck: no record of a cluster in the fleet went missing or back.
func statusCheck(st SoakStatus) SoakCheck {
	c := SoakCheck{Name: "no status record missing or set back", OK: st.Reads > 0 && st.Missing == 0 && st.Back == 0}
	c.Detail = fmt.Sprintf("%d reads of the status branch: %d records missing, %d generations set back", st.Reads, st.Missing, st.Back)
	if len(st.Notes) > 0 {
		c.Detail += " (" + strings.Join(st.Notes, "; ") + ")"
	}
	return c
}

// driftCheck: every change injected was restored within 30 s.
func driftCheck(d SoakDrift) SoakCheck {
	return SoakCheck{Name: "every drift restored", OK: d.Injected > 0 && d.Restored == d.Injected,
		Detail: fmt.Sprintf("%d injected, %d restored within 30 s (p50 %.2fs, max %.2fs), %d skipped (server down)",
			d.Injected, d.Restored, d.RestoreP50, d.RestoreMax, d.Skipped)}
}

// sumSeries sums the samples of a metric (prefix: its name and "{").
func sumSeries(m map[string]float64, prefix string) float64 {
	var n float64
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

// SoakApplies compares regatta's applies that wrote (regatta_applies_total,
// by cluster and profile) with the writes the workload called for: each
// pair's first rollout, profile fa's changes, the spare's returns to the
// fleet, the drift regatta corrected on the pair and, for the event
// profile, each event's instance deployed and withdrawn.
type SoakApplies struct {
	Applies  float64 `json:"applies"`
	Expected float64 `json:"expectedAtMost"`
	// Over are the pairs applied more often than expected, by how much.
	Over map[string]float64 `json:"over,omitempty"`
}

// soakApplies reads the counters of metrics m against the commits made.
// changes and returns count the commits pushed (the last may have been
// pushed as the run ended, its wait cut short, and still applied).
func soakApplies(m map[string]float64, changes, returns float64, spare string, eventOps map[string]float64) SoakApplies {
	drift := map[string]float64{}
	for k, v := range m {
		if l, ok := strings.CutPrefix(k, "regatta_drift_corrections_total{"); ok {
			lb := parseLabels(strings.TrimSuffix(l, "}"))
			drift[lb["cluster"]+"/"+lb["profile"]] += v
		}
	}
	a := SoakApplies{Over: map[string]float64{}}
	for k, v := range m {
		l, ok := strings.CutPrefix(k, "regatta_applies_total{")
		if !ok {
			continue
		}
		lb := parseLabels(strings.TrimSuffix(l, "}"))
		pair := lb["cluster"] + "/" + lb["profile"]
		want := 1 + drift[pair]
		if lb["profile"] == FleetDriftProfile {
			want += changes
		}
		if lb["profile"] == soakEventProfile {
			want = eventOps[lb["cluster"]] + drift[pair]
		}
		if lb["cluster"] == spare {
			want += returns
		}
		a.Applies += v
		a.Expected += want
		if v > want {
			a.Over[pair] = v - want
		}
	}
	return a
}

// check: no pair was applied more often than the workload called for.
func (a SoakApplies) check() SoakCheck {
	c := SoakCheck{Name: "nothing applied twice", OK: a.Applies > 0 && len(a.Over) == 0,
		Detail: fmt.Sprintf("%.0f applies that wrote, at most %.0f called for; %d pairs over", a.Applies, a.Expected, len(a.Over))}
	if len(a.Over) > 0 {
		c.Detail += fmt.Sprintf(" (%v)", a.Over)
	}
	return c
}
