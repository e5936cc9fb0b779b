package status

import (
	"strings"
	"testing"
)

func TestDashboardDrawsRolloutStages(t *testing.T) {
	r := RolloutStatus{Profile: "web", Revision: "3f1c2a9d0000000000000000", Stage: "canary", Halted: true,
		Reason: "halted: canary-1 failed (failureThreshold 1)", Stages: []StageStatus{
			{Name: "canary", Progress: "Halted", Failed: 1},
			{Name: "staging", Progress: "Waiting", Waiting: 2},
		}}
	got := RenderDashboard(Snapshot{Fleet: Fleet{Rollouts: []RolloutStatus{r}}, Clusters: []ClusterStatus{{Cluster: "canary-1", Reachable: true}}})
	for _, want := range []string{
		"## Rollouts",
		"### web · revision `3f1c2a9d`",
		"**Halted** at stage canary: halted: canary-1 failed",
		"```mermaid\nflowchart LR\n",
		`s0["❌ canary<br/>0 done · 0 updating · 0 waiting · 1 failed"]`,
		`s1["⏸️ staging<br/>0 done · 0 updating · 2 waiting"]`,
		"s0 --> s1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("dashboard lacks %q:\n%s", want, got)
		}
	}
}
