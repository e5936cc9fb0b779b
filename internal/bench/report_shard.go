package bench

import (
	"fmt"
	"strings"
)

// shardTargets are the acceptance figures of the issue "Scale out on
// Kubernetes" (16).
func shardTargets(r *Results) []target {
	how := "shard phase (§6)"
	ts := []target{
		{name: "shard: a replica SIGKILLed mid-rollout, its clusters done by the others within lease + 5 s", how: how, figure: "–"},
		{name: "shard: a replica that starts again moves at most 4 of 9 clusters", how: how, figure: "–"},
	}
	s := r.Shard
	if s == nil || s.Moved+s.Pending == 0 && s.TakeoverSecs == 0 {
		return ts
	}
	ts[0].figure = fmt.Sprintf("%s (lease %s, %d clusters pending at the kill)", secs(s.TakeoverSecs), secs(s.LeaseSecs), s.Pending)
	ts[0].met = met(s.Pending > 0 && s.TakeoverSecs <= s.LeaseSecs+5)
	ts[1].figure = fmt.Sprintf("%d of %d", s.Moved, s.Clusters)
	if s.RejoinSecs > 0 {
		ts[1].met = met(s.Moved <= 4)
	}
	return ts
}

func reportShard(b *strings.Builder, r *Results) {
	b.WriteString("## 6. Several replicas sharing the fleet\n\n")
	s := r.Shard
	if s == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	how(b, fmt.Sprintf("%d `bin/regatta run --replicas-mode shard` processes (lease %s) share %d fresh API servers, one profile of "+
		"%d ConfigMaps and a probe per cluster; one replica SIGKILLed mid-rollout, then started again",
		s.Replicas, secs(s.LeaseSecs), s.Clusters, s.Objects), "shards")
	b.WriteString("| what | figure |\n|---|---|\n")
	fmt.Fprintf(b, "| start of the replicas to every cluster converged (a replica works after a lease of membership) | %s |\n", secs(s.ConvergeSecs))
	fmt.Fprintf(b, "| SIGKILL of %s (owner of %d, %d not yet at the new revision) to the last of them applied by another | %s |\n",
		s.Victim, s.VictimOwned, s.Pending, secs(s.TakeoverSecs))
	fmt.Fprintf(b, "| clusters moved when %s started again | %d of %d |\n", s.Victim, s.Moved, s.Clusters)
	fmt.Fprintf(b, "| its start to the owners settled (balanced, each cluster claimed once) | %s |\n", secs(s.RejoinSecs))
	for _, m := range s.Memory {
		fmt.Fprintf(b, "| RSS of %s (%d clusters; peak) | %s (%s) |\n", m.Replica, m.Clusters, mib(m.RSS), mib(m.HWM))
	}
	b.WriteString("\n")
}
