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
	how(b, "9 fresh kube-apiservers, one profile in three stages (canary 1 cluster, staging 2, production 6 with `maxUpdate: 2`, "+
		"soaks of 1 s); a change timed from the trigger until every cluster holds it and the daemon counts all 9 Done, minus the soaks",
		"progressive-rollout")
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
