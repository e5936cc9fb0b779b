package rolloute2e

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// rollingProfile is a profile whose ConfigMap (of its own name) carries
// data.v, healthy once the test marks that version ready, rolled out in
// three stages; production asks for an approval when approval is set.
// windows, when set, is spec.rollout.windows in YAML flow style.
func rollingProfile(name string, approval bool, windows string) string {
	s := fmt.Sprintf(`apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata:
  name: %s
spec:
  clusterSelector: {matchLabels: {env: prod}}
  healthTimeout: 40s
  addons:
  - name: %s
    manifests: {path: addons/%s}
`+readyHealthCheck+`  rollout:
    stages:
    - {name: canary, clusterSelector: {matchLabels: {stage: canary}}, soak: 1s}
    - {name: staging, clusterSelector: {matchLabels: {stage: staging}}, soak: 1s}
    - {name: production, clusterSelector: {matchLabels: {stage: prod}}, maxUpdate: 2, approval: %t}
`, name, name, name, approval)
	if windows != "" {
		s += "    windows: " + windows + "\n"
	}
	return s
}

func profileFile(name string, approval bool, windows string) map[string]string {
	return map[string]string{"profiles/" + name + ".yaml": rollingProfile(name, approval, windows)}
}

func configMap(name, v string) map[string]string {
	return map[string]string{"addons/" + name + "/cm.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {v: %q}\n", name, v)}
}

func control(name, body string) map[string]string {
	return map[string]string{"rollouts/" + name + ".yaml": "apiVersion: regatta.dev/v1alpha1\nkind: RolloutControl\nmetadata: {name: " + name + "}\nspec:\n" + body}
}

// newRollingFleet commits the nine clusters and the profile at v1 and
// returns the repository and an observer of the profile's ConfigMap.
func newRollingFleet(t *testing.T, name string) (*fleetRepo, *observer) {
	t.Helper()
	f := newFleetRepo(t)
	files := profileFile(name, false, "")
	maps.Copy(files, configMap(name, "1"))
	for _, c := range allClusters() {
		maps.Copy(files, clusterFiles(c))
	}
	f.Commit(name+" v1", files)
	return f, newObserverOf(t, 300*time.Millisecond, name)
}

// waitAll waits for every cluster to hold v, marked ready, and for the
// status branch to say the daemon's rollout of v completed: a pair that
// failed on the way (a timeout on a loaded machine) and was retried has
// then been found healthy again, so the next change is not taken for a
// fix of a halted rollout (which would reach its clusters first).
func waitAll(t *testing.T, f *fleetRepo, obs *observer, name, v string) {
	t.Helper()
	testenv.WaitFor(t, 90*time.Second, "every cluster applied and healthy on v"+v, func() bool { return obs.done(v, allClusters()) })
	testenv.WaitFor(t, 30*time.Second, "the rollout of v"+v+" complete on the status branch", func() bool {
		for _, r := range fleetStatus(t, f).Rollouts {
			if r.Profile == name {
				return r.Complete && !r.Halted
			}
		}
		return false
	})
}

// fleetStatus reads status/fleet.yaml of the status branch.
func fleetStatus(t *testing.T, f *fleetRepo) status.Fleet {
	var fl status.Fleet
	if err := yaml.Unmarshal([]byte(f.status("status/fleet.yaml")), &fl); err != nil {
		t.Fatalf("status/fleet.yaml: %v", err)
	}
	return fl
}

// stageProgress is the progress of a stage of the profile's rollout as the
// status branch records it, and the rollout's revision.
func stageProgress(t *testing.T, f *fleetRepo, profile, stage string) (progress, revision string) {
	for _, r := range fleetStatus(t, f).Rollouts {
		if r.Profile != profile {
			continue
		}
		for _, s := range r.Stages {
			if s.Name == stage {
				return s.Progress, r.Revision
			}
		}
	}
	return "", ""
}

func waitInForce(t *testing.T, f *fleetRepo, rev string) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, "revision "+rev[:8]+" in force", func() bool { return fleetStatus(t, f).AppliedRevision == rev })
}

func checkMaxUpdate(t *testing.T, obs *observer, v string) {
	t.Helper()
	most := obs.maxOverlap(v, production)
	t.Logf("v%s: at most %d production clusters updating at once", v, most)
	if most > 2 {
		t.Errorf("v%s: %d production clusters updated at once, maxUpdate is 2", v, most)
	}
}

func others(of ...[]string) []string {
	var out []string
	for _, cs := range of {
		out = append(out, cs...)
	}
	return out
}

// TestRolloutWindowEndToEnd: a window that excludes now, committed while
// the canary updates, lets the canary finish but keeps staging from
// starting; a commit that widens the window lets it start.
func TestRolloutWindowEndToEnd(t *testing.T) {
	const name = "win"
	f, obs := newRollingFleet(t, name)
	startDaemon(t, f)
	waitAll(t, f, obs, name, "1")

	// A day three days from today in the window's zone: the window
	// excludes now unless the test ran for two days.
	const zone = "Asia/Tokyo"
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	far := spec.Weekdays[(int(time.Now().In(loc).Weekday())+3)%7]
	obs.refuseVersion("2") // the canary stays updating until released
	f.Commit(name+" v2", configMap(name, "2"))
	testenv.WaitFor(t, 30*time.Second, "canary gets v2", func() bool { return obs.version("canary-1") == "2" })
	closed := f.Commit("rollout window on "+far+" only", profileFile(name, false, fmt.Sprintf("[{days: [%s], timeZone: %s}]", far, zone)))
	waitInForce(t, f, closed)
	obs.release("2")
	testenv.WaitFor(t, 20*time.Second, "the canary, started before the window closed, finishes", func() bool { return obs.done("2", canary) })
	testenv.WaitFor(t, 20*time.Second, "staging waits for a window", func() bool {
		p, _ := stageProgress(t, f, name, "staging")
		return p == "OutsideWindow"
	})
	testenv.HoldsFor(t, 4*time.Second, "staging and production untouched outside the window", func() bool {
		return len(obs.everSaw("2", others(staging, production))) == 0
	})
	days := "[" + strings.Join(spec.Weekdays, ", ") + "]"
	f.Commit("rollout window every day", profileFile(name, false, fmt.Sprintf("[{days: %s, timeZone: %s}]", days, zone)))
	testenv.WaitFor(t, 30*time.Second, "staging gets v2 once the window includes now", func() bool { return obs.done("2", staging) })
	testenv.WaitFor(t, 60*time.Second, "production gets v2", func() bool { return obs.done("2", production) })
	checkMaxUpdate(t, obs, "2")
}

// TestRolloutPauseEndToEnd: a pause committed while two production
// clusters update lets them finish and admits no other; a resume commit
// continues the rollout, two at a time.
func TestRolloutPauseEndToEnd(t *testing.T) {
	const name = "pause"
	f, obs := newRollingFleet(t, name)
	startDaemon(t, f)
	waitAll(t, f, obs, name, "1")

	obs.holdOn("2", production...)
	f.Commit(name+" v2", configMap(name, "2"))
	testenv.WaitFor(t, 60*time.Second, "two production clusters updating to v2", func() bool { return len(obs.everSaw("2", production)) == 2 })
	updating := obs.everSaw("2", production)
	f.Commit("pause the rollout", control(name, "  paused: true\n"))
	testenv.WaitFor(t, 30*time.Second, "the status branch says production is paused", func() bool {
		p, _ := stageProgress(t, f, name, "production")
		return p == "Paused"
	})
	obs.release("2")
	testenv.WaitFor(t, 20*time.Second, "the clusters updating when paused finish", func() bool { return obs.done("2", updating) })
	testenv.HoldsFor(t, 4*time.Second, "no other production cluster gets v2 while paused", func() bool {
		return len(obs.everSaw("2", production)) == 2
	})
	f.Commit("resume the rollout", control(name, "  paused: false\n"))
	testenv.WaitFor(t, 60*time.Second, "production gets v2 after the resume", func() bool { return obs.done("2", production) })
	checkMaxUpdate(t, obs, "2")
}

// TestRolloutApprovalAcrossRestart: the daemon stops while production
// waits for its approval; a restarted daemon neither re-rolls canary and
// staging nor starts production; the approval, committed while no daemon
// runs, names the revision that started the rollout (as status/fleet.yaml
// records it), and the next daemon honours it.
func TestRolloutApprovalAcrossRestart(t *testing.T) {
	const name = "resume"
	f, obs := newRollingFleet(t, name)
	_, stop1 := runDaemon(t, f)
	t.Cleanup(stop1)
	waitAll(t, f, obs, name, "1")

	files := profileFile(name, true, "")
	maps.Copy(files, configMap(name, "2"))
	rev2 := f.Commit(name+" v2, production asks for approval", files)
	testenv.WaitFor(t, 60*time.Second, "canary and staging get v2", func() bool { return obs.done("2", others(canary, staging)) })
	testenv.WaitFor(t, 20*time.Second, "the status branch says production awaits approval of v2", func() bool {
		p, rev := stageProgress(t, f, name, "production")
		return p == "AwaitingApproval" && rev == rev2
	})
	stop1()
	before := resourceVersions(t, name, others(canary, staging))

	d2, stop2 := runDaemon(t, f)
	t.Cleanup(stop2)
	testenv.WaitFor(t, 30*time.Second, "the restarted daemon finds canary and staging reached", func() bool {
		return rolloutCount(d2, name, "Done") == 3 && rolloutCount(d2, name, "Pending") == 6
	})
	testenv.HoldsFor(t, 3*time.Second, "production still waits for its approval", func() bool {
		return len(obs.everSaw("2", production)) == 0
	})
	stop2()

	f.Commit("approve v2 for production", control(name, fmt.Sprintf("  approvals:\n  - {stage: production, revision: %s}\n", rev2[:12])))
	startDaemon(t, f)
	testenv.WaitFor(t, 60*time.Second, "production gets v2 once approved", func() bool { return obs.done("2", production) })
	checkMaxUpdate(t, obs, "2")
	if after := resourceVersions(t, name, others(canary, staging)); !maps.Equal(before, after) {
		t.Errorf("canary and staging were rolled again after the restart: resourceVersions %v, then %v", before, after)
	}
	testenv.WaitFor(t, 20*time.Second, "status/fleet.yaml keeps the rollout's revision", func() bool {
		p, rev := stageProgress(t, f, name, "production")
		return p == "Done" && rev == rev2
	})
}

func rolloutCount(d *reconciler.Daemon, profile, state string) float64 {
	return testutil.ToFloat64(d.Metrics().Rollout.Clusters.WithLabelValues(profile, state))
}

// resourceVersions are the ConfigMap's resourceVersions on the clusters.
func resourceVersions(t *testing.T, name string, clusters []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range clusters {
		cm, err := clientset(t, c).CoreV1().ConfigMaps("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		out[c] = cm.ResourceVersion
	}
	return out
}

// fakeClock is the clock the daemon's rollouts read: an instant the test
// sets, moving on in real time from there.
type fakeClock struct {
	mu      sync.Mutex
	at, set time.Time
}

func newFakeClock() *fakeClock {
	now := time.Now()
	return &fakeClock{at: now, set: now}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at.Add(time.Since(c.set))
}

func (c *fakeClock) Set(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.set = at, time.Now()
}

// TestRolloutWindowOpensByTheClock: a change committed shortly before its
// window opens (by the daemon's clock, injected) starts nowhere until
// then, and the first stage starts when the window opens, with no commit.
func TestRolloutWindowOpensByTheClock(t *testing.T) {
	const name = "clock"
	f, obs := newRollingFleet(t, name)
	clk := newFakeClock()
	_, stop := runDaemonAt(t, f, clk.Now)
	t.Cleanup(stop)
	waitAll(t, f, obs, name, "1")

	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	opening := time.Date(2026, time.December, 2, 10, 0, 0, 0, loc)
	window := fmt.Sprintf("[{days: [%s], hours: \"10:00-11:00\", timeZone: America/New_York}]", spec.Weekdays[opening.Weekday()])
	clk.Set(opening.Add(-15 * time.Second))
	opensAt := time.Now().Add(15 * time.Second) // in real time
	files := profileFile(name, false, window)
	maps.Copy(files, configMap(name, "2"))
	f.Commit(name+" v2 with a window from 10:00 New York time", files)
	testenv.WaitFor(t, 12*time.Second, "the canary waits for the window", func() bool {
		p, _ := stageProgress(t, f, name, "canary")
		return p == "OutsideWindow"
	})
	testenv.HoldsFor(t, time.Until(opensAt.Add(-time.Second)), "no cluster gets v2 before the window opens", func() bool {
		early := obs.everSaw("2", allClusters())
		if len(early) > 0 {
			t.Logf("%v got v2 at %s, the window opens at %s", early, time.Now().Format(time.StampMilli), opensAt.Format(time.StampMilli))
		}
		return len(early) == 0
	})
	testenv.WaitFor(t, 20*time.Second, "the canary gets v2 once the window opens", func() bool { return obs.version("canary-1") == "2" })
	if w, _ := obs.windowOf("canary-1", "2"); w.start.Before(opensAt) {
		t.Errorf("the canary started at %s, before the window opened at %s", w.start.Format(time.StampMilli), opensAt.Format(time.StampMilli))
	}
	testenv.WaitFor(t, 60*time.Second, "every cluster gets v2 within the window", func() bool { return obs.done("2", allClusters()) })
	checkMaxUpdate(t, obs, "2")
}
