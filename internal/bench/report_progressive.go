package bench

import (
	"fmt"
	"strings"
)

// progressiveSecs returns a figure of every round without error.
func (r *Results) progressiveSecs(of func(ProgressiveResult) float64) []float64 {
	var out []float64
	for _, p := range r.Progressive {
		if p.Err == "" {
			out = append(out, of(p))
		}
	}
	return out
}

func reportProgressive(b *strings.Builder, r *Results) {
	if len(r.Progressive) == 0 {
		return
	}
	b.WriteString("## Progressive rollout (issue 14)\n\n")
	b.WriteString(progressiveHow)
	b.WriteString("| round | commit to last cluster, minus soaks | with soaks | soaks | canary | staging | production | most updating at once (cap) | first rollout | error |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range r.Progressive {
		stage := map[string]string{}
		for _, s := range p.Stages {
			stage[s.Name] = secs(s.Secs)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %d (%d) | %s | %s |\n", p.Round, secs(p.Secs), secs(p.TotalSecs),
			secs(p.SoakSecs), stage["canary"], stage["staging"], stage["production"], p.MaxUpdating, p.MaxUpdate, secs(p.FirstSecs), p.Err)
	}
	xs := r.progressiveSecs(func(p ProgressiveResult) float64 { return p.Secs })
	if len(xs) > 0 {
		fmt.Fprintf(b, "\nCommit to last cluster minus soaks: p50 %s, min %s, max %s over %d round(s).\n",
			secs(Quantile(xs, .5)), secs(Quantile(xs, 0)), secs(Quantile(xs, 1)), len(xs))
	}
	b.WriteString("\n")
}

const progressiveHow = `Each round starts 9 fresh kube-apiservers and an in-process daemon (as ` + "`regatta run`" + ` wires it)
following a loopback Git server. One profile (a ConfigMap) is rolled out in three stages: canary (1
cluster, soak 1 s), staging (2, soak 1 s), production (6, ` + "`maxUpdate: 2`" + `). After the first rollout
(timed from the daemon's start, soaks included) a commit changes the ConfigMap and the daemon is
triggered as a push webhook would; timed from the trigger until every cluster holds the change
(polled every 20 ms) and the daemon counts all 9 admitted and applied and healthy
(` + "`regatta_rollout_clusters{state=\"Done\"}`" + `), minus the two soaks. A stage's time runs from when it
could begin (the trigger, or the stage before's last cluster plus its soak) to its last cluster holding
the change. Clusters updating at once: admitted (` + "`regatta_rollout_admitted_total`" + `) and not yet
Done, sampled every 5 ms.

`
