package rolloute2e

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler"
)

// readyHealthCheck judges a profile's ConfigMaps healthy once the test
// marks their version (data.v) ready (observer_test.go).
const readyHealthCheck = `  healthChecks:
  - kind: ConfigMap
    script: |
      hs = {status = "Progressing", message = "not marked ready"}
      local a = obj.metadata.annotations
      if a ~= nil and obj.data ~= nil and a["test.regatta.dev/ready"] == obj.data.v then
        hs.status = "Healthy"
      end
      return hs
`

const profile = `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata:
  name: web
spec:
  clusterSelector: {matchLabels: {env: prod}}
  healthTimeout: 3s
  addons:
  - name: web
    manifests: {path: addons/web}
` + readyHealthCheck + `  rollout:
    stages:
    - name: canary
      clusterSelector: {matchLabels: {stage: canary}}
      soak: 1s
    - name: staging
      clusterSelector: {matchLabels: {stage: staging}}
      soak: 1s
    - name: production
      clusterSelector: {matchLabels: {stage: prod}}
      maxUpdate: 2
      approval: true
`

func webConfigMap(v string) map[string]string {
	return map[string]string{"addons/web/cm.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: default}\ndata: {v: %q}\n", v)}
}

func approval(revs ...string) map[string]string {
	s := "apiVersion: regatta.dev/v1alpha1\nkind: RolloutControl\nmetadata: {name: web}\nspec:\n  approvals:\n"
	for _, r := range revs {
		s += fmt.Sprintf("  - {stage: production, revision: %s}\n", r[:12]) // unquoted, as users write it
	}
	return map[string]string{"rollouts/web.yaml": s}
}

// TestProgressiveRollout is the acceptance of progressive rollouts on
// nine real API servers in three stages (canary 1, staging 2, production
// 6 with maxUpdate 2 and an approval), watched from the API servers.
func TestProgressiveRollout(t *testing.T) {
	f := newFleetRepo(t)
	files := map[string]string{"profiles/web.yaml": profile}
	maps.Copy(files, webConfigMap("1"))
	for _, c := range allClusters() {
		maps.Copy(files, clusterFiles(c))
	}
	rev1 := f.Commit("fleet with web v1", files)
	obs := newObserver(t, 400*time.Millisecond)
	d := startDaemon(t, f)

	t.Run("v1 goes canary, staging after the soak, production waits for its approval", func(t *testing.T) {
		goesThroughStages(t, obs, "1")
		testenv.HoldsFor(t, 3*time.Second, "production untouched without approval", func() bool {
			return len(obs.everSaw("1", production)) == 0
		})
		f.Commit("approve v1 for production", approval(rev1))
		productionTwoAtATime(t, obs, "1")
	})

	var rev2 string
	t.Run("a good change v2 follows the stages, production 2 at a time", func(t *testing.T) {
		rev2 = f.Commit("web v2", webConfigMap("2"))
		goesThroughStages(t, obs, "2")
		testenv.HoldsFor(t, 2*time.Second, "production keeps v1 without approval of v2", func() bool {
			return len(obs.everSaw("2", production)) == 0
		})
		f.Commit("approve v2 for production", approval(rev1, rev2))
		productionTwoAtATime(t, obs, "2")
	})

	t.Run("v3 failing its health check on the canary halts with 8 untouched", func(t *testing.T) {
		obs.refuseVersion("3")
		f.Commit("web v3 (broken)", webConfigMap("3"))
		testenv.WaitFor(t, 30*time.Second, "canary gets v3", func() bool { return obs.version("canary-1") == "3" })
		testenv.WaitFor(t, 30*time.Second, "the rollout halts", func() bool { return halted(d) == 1 })
		others := append(append([]string(nil), staging...), production...)
		testenv.HoldsFor(t, 4*time.Second, "the 8 others keep v2", func() bool {
			return len(obs.everSaw("3", others)) == 0
		})
		testenv.WaitFor(t, 20*time.Second, "the status branch says the rollout halted and why", func() bool {
			fleet := f.status("status/fleet.yaml")
			return strings.Contains(fleet, "halted: true") && strings.Contains(fleet, "canary-1 failed") &&
				strings.Contains(f.status("status/README.md"), "```mermaid")
		})
		testenv.WaitFor(t, 20*time.Second, "prod-1's record says it waits, pinned", func() bool {
			st := f.status("status/clusters/prod-1.yaml")
			return strings.Contains(st, "stage: production") && strings.Contains(st, "state: Pending")
		})
	})

	t.Run("a revert brings the canary back", func(t *testing.T) {
		f.Commit("revert to web v2", webConfigMap("2"))
		testenv.WaitFor(t, 30*time.Second, "canary back on v2", func() bool { return obs.version("canary-1") == "2" })
		testenv.WaitFor(t, 30*time.Second, "the rollout is no longer halted", func() bool { return halted(d) == 0 })
		for _, c := range append(append([]string(nil), staging...), production...) {
			if v := obs.version(c); v != "2" {
				t.Errorf("%s has v%s, want v2", c, v)
			}
		}
	})
}

func halted(d *reconciler.Daemon) float64 {
	return testutil.ToFloat64(d.Metrics().Rollout.Halted.WithLabelValues("web"))
}

// goesThroughStages waits for the version on the canary, then staging,
// and checks staging started only after the canary was healthy and
// soaked.
func goesThroughStages(t *testing.T, obs *observer, v string) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, "canary gets v"+v, func() bool { return obs.version("canary-1") == v })
	if got := obs.everSaw(v, append(append([]string(nil), staging...), production...)); len(got) > 0 {
		t.Fatalf("v%s reached %v together with the canary", v, got)
	}
	testenv.WaitFor(t, 30*time.Second, "staging gets v"+v, func() bool {
		return obs.version("staging-1") == v && obs.version("staging-2") == v
	})
	cw, _ := obs.windowOf("canary-1", v)
	for _, c := range staging {
		w, _ := obs.windowOf(c, v)
		if cw.end.IsZero() || w.start.Before(cw.end.Add(time.Second)) {
			t.Errorf("%s started v%s at %s, before the canary was ready (%s) and soaked 1s", c, v, w.start.Format(time.StampMilli), cw.end.Format(time.StampMilli))
		}
	}
}

// productionTwoAtATime waits for the version on all production clusters
// and checks, from the watches, that never more than 2 updated at once.
func productionTwoAtATime(t *testing.T, obs *observer, v string) {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, "production gets v"+v, func() bool {
		for _, c := range production {
			if w, ok := obs.windowOf(c, v); !ok || w.end.IsZero() {
				return false
			}
		}
		return true
	})
	most := obs.maxOverlap(v, production)
	t.Logf("v%s: at most %d production clusters updating at once", v, most)
	if most > 2 {
		t.Errorf("v%s: %d production clusters updated at once, maxUpdate is 2", v, most)
	}
	if most < 2 {
		t.Errorf("v%s: production went one at a time; maxUpdate 2 allows 2", v)
	}
}
