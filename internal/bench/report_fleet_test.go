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
