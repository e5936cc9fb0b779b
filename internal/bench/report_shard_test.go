package bench

import (
	"strings"
	"testing"
)

func TestShardReportAndTargets(t *testing.T) {
	r := &Results{Shard: &ShardResult{
		Clusters:     9,
		Replicas:     3,
		LeaseSecs:    15,
		TakeoverSecs: 17.4,
		Pending:      3,
		Moved:        3,
		RejoinSecs:   4,
		Memory:       []ReplicaMemory{{Replica: "regatta-0", Clusters: 3, RSS: 70 << 20, HWM: 72 << 20}},
	}}
	var b strings.Builder
	reportShard(&b, r)
	for _, want := range []string{"## 6. Several replicas", "| clusters moved when  started again | 3 of 9 |", "70.0 MiB (72.0 MiB)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	ts := shardTargets(r)
	if ts[0].verdict() != "**met**" || ts[1].verdict() != "**met**" {
		t.Errorf("targets: %+v", ts)
	}
	r.Shard.TakeoverSecs, r.Shard.Moved = 21, 5
	if ts := shardTargets(r); ts[0].verdict() != "**missed**" || ts[1].verdict() != "**missed**" {
		t.Errorf("targets: %+v", ts)
	}
	if ts := shardTargets(&Results{}); ts[0].verdict() != "not measured" {
		t.Errorf("targets without the phase: %+v", ts)
	}
}
