package bench

import (
	"math"
	"time"
)

// Trend is one soak series after its warm-up: its mean, its least-squares
// slope per hour with the slope's standard error, and the verdict.
type Trend struct {
	Series string `json:"series"`
	Unit   string `json:"unit"`
	// Points are the samples after the warm-up the slope is fitted to.
	Points int     `json:"points"`
	Mean   float64 `json:"mean"`
	// SlopePerHour and StdErrPerHour are in Unit per hour.
	SlopePerHour  float64 `json:"slopePerHour"`
	StdErrPerHour float64 `json:"stdErrPerHour"`
	// Change is the slope over the fitted window as a fraction of the mean
	// (0.05: the fit rose by 5% of the mean across the window).
	Change  float64 `json:"change"`
	Verdict string  `json:"verdict"`
}

// Soak verdicts.
const (
	VerdictFlat    = "flat"
	VerdictGrowing = "growing"
	// VerdictTooShort: fewer than trendMinPoints samples after the warm-up.
	VerdictTooShort = "too few samples"
)

// Trend thresholds: a series grows when its slope is both significant (more
// than trendSigmas standard errors above 0) and material (the fit rises by
// more than trendMaterial of the mean over the fitted window). METHODS.md#soak
// says why both.
const (
	trendSigmas    = 2.0
	trendMaterial  = 0.05
	trendMinPoints = 4
	// SoakWarmup is the fraction of the run left out of the fit.
	SoakWarmup = 0.2
)

// NewTrend fits ys (sampled at ts seconds from the start of a run of
// length total) after the warm-up and gives the verdict.
func NewTrend(series, unit string, ts, ys []float64, total time.Duration) Trend {
	tr := Trend{Series: series, Unit: unit}
	from := total.Seconds() * SoakWarmup
	var xs, vs []float64
	for i := range ts {
		if ts[i] >= from && i < len(ys) && !math.IsNaN(ys[i]) {
			xs, vs = append(xs, ts[i]), append(vs, ys[i])
		}
	}
	tr.Points = len(xs)
	if len(xs) < trendMinPoints {
		tr.Verdict = VerdictTooShort
		return tr
	}
	slope, se, mean := fitLine(xs, vs)
	tr.Mean, tr.SlopePerHour, tr.StdErrPerHour = mean, slope*3600, se*3600
	window := xs[len(xs)-1] - xs[0]
	if mean != 0 {
		tr.Change = slope * window / math.Abs(mean)
	}
	tr.Verdict = trendVerdict(slope, se, tr.Change)
	return tr
}

// trendVerdict: growing when the slope is significant and material.
func trendVerdict(slope, se, change float64) string {
	if slope > trendSigmas*se && change > trendMaterial {
		return VerdictGrowing
	}
	return VerdictFlat
}

// fitLine is the least-squares line through (xs, ys): its slope, the
// slope's standard error and the mean of ys (n ≥ 3, xs not all equal).
func fitLine(xs, ys []float64) (slope, stdErr, mean float64) {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx == 0 {
		return 0, 0, my
	}
	slope = sxy / sxx
	var ss float64
	for i := range xs {
		r := ys[i] - my - slope*(xs[i]-mx)
		ss += r * r
	}
	return slope, math.Sqrt(ss / (n - 2) / sxx), my
}
