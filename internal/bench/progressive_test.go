package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/spec"
)

// TestProgressiveFleetLoads: the progressive phase's repository is valid
// and its profile rolls out in the three stages the phase times.
func TestProgressiveFleetLoads(t *testing.T) {
	fleet := NewClusters(9)
	for i := range fleet {
		fleet[i].Kubeconfig = []byte("apiVersion: v1\nkind: Config\n")
	}
	repo, diags := spec.Load(mapFS(progressiveFiles(fleet, time.Second, 1)))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	ro := repo.Profile(progressiveProfile).Spec.Rollout
	var names []string
	for _, s := range ro.Stages {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "canary,staging,production" || ro.Stages[2].MaxUpdate.Of(6) != 2 {
		t.Errorf("stages %s, production maxUpdate %v", got, ro.Stages[2].MaxUpdate)
	}
}

// TestStageTimes: a stage's time runs from the stage before's last cluster
// plus its soak to its own last cluster.
func TestStageTimes(t *testing.T) {
	fleet := NewClusters(9)
	applied := map[string]float64{}
	for i, c := range fleet {
		applied[c.Name] = []float64{0.2, 1.5, 1.6, 2.7, 2.7, 2.9, 2.9, 3.1, 3.2}[i]
	}
	got := stageTimes(fleet, applied, time.Second)
	want := []float64{0.2, 0.4, 0.6}
	for i, s := range got {
		if d := s.Secs - want[i]; d > 1e-9 || d < -1e-9 {
			t.Errorf("stage %s: %.2fs, want %.2fs", s.Name, s.Secs, want[i])
		}
	}
	if got[2].FirstSecs != 2.7 || got[2].LastSecs != 3.2 {
		t.Errorf("production first %.1f last %.1f", got[2].FirstSecs, got[2].LastSecs)
	}
}
