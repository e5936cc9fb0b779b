package diff

import (
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/render"
)

// TestPlanPrintsRolloutStages: a change to a profile with spec.rollout
// lists the stages it will go through, with the clusters it affects.
func TestPlanPrintsRolloutStages(t *testing.T) {
	withRollout := strings.Replace(fleetFiles(6)["profiles/web.yaml"], "  addons:\n", `  rollout:
    maxUpdate: 50%
    stages:
    - name: canary
      clusterSelector: {matchLabels: {env: staging}}
      soak: 10m
    - name: production
      clusterSelector: {matchLabels: {env: prod}}
      maxUpdate: 1
      approval: true
  addons:
`, 1)
	base := edit(fleetFiles(6), map[string]string{"profiles/web.yaml": withRollout})
	head := edit(base, map[string]string{"web/base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {replicas: \"2\"}\n"})
	rep := compare(t, render.New(render.Options{}), base, head)
	if len(rep.Rollouts) != 1 {
		t.Fatalf("rollouts = %+v", rep.Rollouts)
	}
	got := strings.Join(rolloutLines(rep.Rollouts[0]), "\n")
	want := "1. canary: c01, c03, c05, 3 at a time, then soak 10m\n" +
		"2. production, after approval (rollouts/web.yaml): c00, c02, c04, 1 at a time"
	if got != want {
		t.Errorf("stages\n got %s\nwant %s", got, want)
	}
	if title := rolloutTitle(rep.Rollouts[0]); title != "rollout of web in 2 stages, at most 50% at once" {
		t.Errorf("title %q", title)
	}
}
