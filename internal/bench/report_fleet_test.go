package bench

import (
	"strings"
	"testing"
)

// TestFleetTargets judges the fleet targets from three sizes and the
// calibration: the RSS slope, the change and restart at 1,000, idle
// requests, linearity and the 15 % calibration bound.
func TestFleetTargets(t *testing.T) {
	run := func(n int, rssMiB, change float64) FleetRun {
		return FleetRun{Clusters: n, Change: Latency{Clusters: n, Last: change, P50: change / 2}, IdleOther: 0.9,
			Idle:    ProcSample{RSS: int64(rssMiB * (1 << 20)), HeapInuse: 1 << 20, Goroutines: 10, Conns: n},
			Restart: &FleetRestart{Secs: 20}}
	}
	r := &Results{Fleet: &FleetResult{Runs: []FleetRun{run(100, 100, 5), run(500, 400, 25), run(1000, 780, 50)},
		Calibration: []FleetRun{run(10, 80, 1), run(10, 82, 1.1)}}}
	verdicts := map[string]string{}
	for _, tg := range fleetTargets(r) {
		verdicts[tg.name[:strings.Index(tg.name, ":")+12]] = tg.verdict() + " " + tg.figure
	}
	for prefix, want := range map[string]string{
		"fleet: ≤ 1 MiB RSS":  "**met** 774 KiB",
		"fleet: a fleet-wi":   "**met** last cluster 50.00 s",
		"fleet: idle ≤ 1 req": "**met** 0.90",
		"fleet: restart at 1": "**met** 20.00 s, 0 applies, 0 writes",
		"fleet: nothing grow": "**met**",
		"fleet: calibration":  "**met** all 8 figures",
	} {
		got := ""
		for k, v := range verdicts {
			if strings.HasPrefix(k, prefix[:min(len(prefix), len(k))]) {
				got = v
			}
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want prefix %q", prefix, got, want)
		}
	}
	// An idle window shorter than the drift interval holds no drift pass:
	// the idle requests are read from the largest run whose window held one,
	// of another measurement when the curves' runs have none.
	for i := range r.Fleet.Runs {
		r.Fleet.Runs[i].IdleSecs, r.Fleet.Runs[i].DriftSecs, r.Fleet.Runs[i].IdleOther = 180, 300, 0
	}
	other := run(2000, 1600, 100)
	other.IdleSecs, other.DriftSecs, other.IdleOther, other.Measured = 360, 300, 0.95, &PhaseRun{Commit: "abc1234"}
	r.Fleet.Runs = append(r.Fleet.Runs, other)
	for _, tg := range fleetTargets(r) {
		if strings.Contains(tg.name, "idle ≤ 1 request") && !strings.HasPrefix(tg.figure, "0.95 requests per cluster per minute at 2000 clusters") {
			t.Errorf("idle requests read from a window without a drift pass: %s", tg.figure)
		}
	}
	for _, tg := range fleetTargets(r) {
		if strings.Contains(tg.name, "linearly") && !strings.Contains(tg.figure, "idle requests not compared") {
			t.Errorf("linearity compared idle windows without a drift pass: %s", tg.figure)
		}
	}
	r.Fleet.Runs = r.Fleet.Runs[:3]
	r.Fleet.Runs[2] = run(1000, 1500, 90)
	r.Fleet.Calibration[1].Idle.RSS *= 2
	for _, tg := range fleetTargets(r) {
		if strings.Contains(tg.name, "≤ 60 s") && !strings.Contains(tg.name, "restart") && tg.verdict() != "**missed**" {
			t.Errorf("a change of 90 s at 1,000: %s", tg.verdict())
		}
		if strings.Contains(tg.name, "calibration") && (tg.verdict() != "**missed**" || !strings.Contains(tg.figure, "regatta RSS idle")) {
			t.Errorf("calibration with twice the RSS: %s %s", tg.verdict(), tg.figure)
		}
		if strings.Contains(tg.name, "linearly") && tg.verdict() != "**missed**" {
			t.Errorf("linearity with RSS per cluster tripling: %s %s", tg.verdict(), tg.figure)
		}
	}
}

// TestFleetLinearityByWork: with allocation and CPU figures, linearity
// judges regatta's work in the change (allocations per added cluster, its
// CPU against the API servers' for the same requests), not the wall time a
// saturated machine stretches; the wall time is shown beside.
func TestFleetLinearityByWork(t *testing.T) {
	run := func(n int, change, alloc, cpu, servers float64) FleetRun {
		return FleetRun{Clusters: n, Change: Latency{Clusters: n, Last: change}, IdleOther: 0.8,
			Idle:        ProcSample{RSS: int64(n) << 19, HeapInuse: 1 << 20, Goroutines: 10, Conns: n},
			ChangeAlloc: alloc, ChangeCPU: cpu, ChangeServersCPU: servers}
	}
	linear := func(f *FleetResult) target {
		for _, tg := range fleetTargets(&Results{Fleet: f}) {
			if strings.Contains(tg.name, "linearly") {
				return tg
			}
		}
		t.Fatal("no linearity target")
		return target{}
	}
	// Wall time per added cluster doubles at 2,000 while regatta's
	// allocations stay flat and its CPU grows as the servers' does.
	f := &FleetResult{Runs: []FleetRun{run(100, 1, 1e8, 0.7, 1.5), run(500, 5, 5e8, 3.4, 6), run(1000, 9, 1e9, 5.7, 11.5),
		run(2000, 30, 2e9, 18.7, 37.4)}}
	if tg := linear(f); tg.verdict() != "**met**" || !strings.Contains(tg.figure, "the change's last cluster 10.0 → 21.0 ms (2.10×)") {
		t.Errorf("flat work, slower machine: %s %s", tg.verdict(), tg.figure)
	}
	f.Runs[3].ChangeAlloc = 4e9 // allocations per added cluster tripled
	if tg := linear(f); tg.verdict() != "**missed**" {
		t.Errorf("allocations per cluster growing: %s %s", tg.verdict(), tg.figure)
	}
	f.Runs[3].ChangeAlloc, f.Runs[3].ChangeCPU = 2e9, 40 // CPU grew far more than the servers'
	if tg := linear(f); tg.verdict() != "**missed**" {
		t.Errorf("regatta's CPU outgrowing the servers': %s %s", tg.verdict(), tg.figure)
	}
}
