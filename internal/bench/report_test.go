package bench

import (
	"strings"
	"testing"
	"time"
)

// TestReportTargetsNameTheirRun: a phase this run did not measure keeps
// its figures from the earlier results.json, and its targets' rows name
// the commit and date of that earlier run; the phases table gives the
// command to measure them again, once per phase.
func TestReportTargetsNameTheirRun(t *testing.T) {
	day1, day2 := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC), time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	old := &Results{Started: day1, Machine: Machine{Commit: "aaaaaaa"}, Options: map[string]string{"fleet": "", "fleetCalibrate": "0"},
		Fleet: &FleetResult{},
		Shard: &ShardResult{Clusters: 9, Replicas: 3, LeaseSecs: 15, TakeoverSecs: 17.4, Pending: 3, Moved: 3, RejoinSecs: 4}}
	r := &Results{Started: day2, Machine: Machine{Commit: "bbbbbbb"}, Options: map[string]string{"rounds": "5", "fleet": "100,500,1000", "fleetCalibrate": "10"},
		Steady: &SteadyResult{}}
	r.KeepPhases(old, func(p string) bool { return p == "daemon" })
	if r.Shard != old.Shard {
		t.Fatal("the shard phase's figures were not kept")
	}
	var b strings.Builder
	reportTargets(&b, r)
	reportPhases(&b, r)
	for _, want := range []string{
		"| shard: a replica that starts again moves at most 4 of 9 clusters | 3 of 9 | **met** | shard phase (§6) | `aaaaaaa` | 2026-12-01 |",
		"| daemon phase (§2) | `bbbbbbb` | 2026-12-03 |",
		"| shard | `go run ./internal/bench/cmd/regatta-bench -phases shard` | `aaaaaaa` | 2026-12-01 | [method](METHODS.md#shards) |",
		"| rollout | `go run ./internal/bench/cmd/regatta-bench -phases rollout -rounds 5` | `aaaaaaa` | 2026-12-01 |",
		// the fleet's command as it was run, not with this run's defaults
		"| fleet | `go run ./internal/bench/cmd/regatta-bench -phases fleet -fleet-calibrate 0` | `aaaaaaa` | 2026-12-01 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("targets lack %q:\n%s", want, b.String())
		}
	}
}
