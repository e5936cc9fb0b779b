package bench

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// series samples f every 10 s over d.
func series(d time.Duration, f func(i int, t float64) float64) (ts, ys []float64) {
	for i, t := 0, 0.0; t <= d.Seconds(); i, t = i+1, t+10 {
		ts, ys = append(ts, t), append(ys, f(i, t))
	}
	return ts, ys
}

func TestNewTrend(t *testing.T) {
	d := 10 * time.Minute
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name string
		f    func(i int, t float64) float64
		want string
	}{
		{"constant", func(int, float64) float64 { return 100 }, VerdictFlat},
		{"leak: +1 MiB a minute on 50 MiB", func(_ int, t float64) float64 { return 50<<20 + t/60*(1<<20) }, VerdictGrowing},
		{"leak under noise", func(_ int, t float64) float64 { return 1000 + t + 20*rng.NormFloat64() }, VerdictGrowing},
		{"noisy flat: ±10% around 1000", func(int, float64) float64 { return 1000 + 100*rng.NormFloat64() }, VerdictFlat},
		{"sawtooth (a GC cycle)", func(i int, _ float64) float64 { return 100 + float64(i%6)*10 }, VerdictFlat},
		{"significant but tiny: +1% over the run", func(_ int, t float64) float64 { return 1000 + t/60 }, VerdictFlat},
		{"falling", func(_ int, t float64) float64 { return 5000 - t }, VerdictFlat},
		{"warm-up rise then flat", func(_ int, t float64) float64 { return 100 + 900*math.Min(1, t/100) }, VerdictFlat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, ys := series(d, tt.f)
			tr := NewTrend("x", "bytes", ts, ys, d)
			if tr.Verdict != tt.want {
				t.Errorf("verdict %q, want %q (slope %.3g/h ± %.3g, change %.3f, mean %.3g)",
					tr.Verdict, tt.want, tr.SlopePerHour, tr.StdErrPerHour, tr.Change, tr.Mean)
			}
		})
	}
}

func TestNewTrendSlopePerHour(t *testing.T) {
	d := time.Hour
	ts, ys := series(d, func(_ int, t float64) float64 { return 7 + 2*t }) // 2 per second
	tr := NewTrend("x", "", ts, ys, d)
	if math.Abs(tr.SlopePerHour-7200) > 1e-6 || tr.StdErrPerHour > 1e-6 {
		t.Errorf("slope %v ± %v per hour, want 7200 ± 0", tr.SlopePerHour, tr.StdErrPerHour)
	}
	if want := int(0.8*d.Seconds()/10) + 1; tr.Points != want {
		t.Errorf("%d points after the warm-up, want %d", tr.Points, want)
	}
}

func TestNewTrendTooShort(t *testing.T) {
	tr := NewTrend("x", "", []float64{100, 110}, []float64{1, 2}, 2*time.Minute)
	if tr.Verdict != VerdictTooShort {
		t.Errorf("verdict %q, want %q", tr.Verdict, VerdictTooShort)
	}
}
