package diff

import (
	"fmt"
	"strings"
)

// rolloutLines describes each stage of a rollout plan on one line.
func rolloutLines(rp RolloutPlan) []string {
	out := make([]string, 0, len(rp.Stages))
	for i, s := range rp.Stages {
		line := fmt.Sprintf("%d. %s", i+1, s.Name)
		if s.Approval {
			line += ", after approval (rollouts/" + rp.Profile + ".yaml)"
		}
		line += fmt.Sprintf(": %s, %d at a time", ClusterList(s.Clusters, 5), s.MaxUpdate)
		if s.Soak != "" && i < len(rp.Stages)-1 {
			line += ", then soak " + s.Soak
		}
		out = append(out, line)
	}
	return out
}

func rolloutTitle(rp RolloutPlan) string {
	t := fmt.Sprintf("rollout of %s in %s", rp.Profile, plural(len(rp.Stages), "stage"))
	if rp.MaxUpdate != "" {
		t += ", at most " + rp.MaxUpdate + " at once"
	}
	return t
}

func writeTextRollouts(b *strings.Builder, r *Report, c colors) {
	for _, rp := range r.Rollouts {
		fmt.Fprintf(b, "\n%s\n", c.bold(strings.ToUpper(rolloutTitle(rp)[:1])+rolloutTitle(rp)[1:]+":"))
		for _, l := range rolloutLines(rp) {
			fmt.Fprintf(b, "  %s\n", l)
		}
	}
}

func writeMarkdownRollouts(b *strings.Builder, r *Report) {
	for _, rp := range r.Rollouts {
		fmt.Fprintf(b, "\n#### 🚦 %s\n\n", mdEscape(strings.ToUpper(rolloutTitle(rp)[:1])+rolloutTitle(rp)[1:]))
		for _, l := range rolloutLines(rp) {
			fmt.Fprintf(b, "%s\n", mdEscape(l))
		}
	}
}
