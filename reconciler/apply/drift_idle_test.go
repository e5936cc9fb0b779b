package apply_test

import (
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// An idle drift watcher keeps no worker goroutine (a fleet daemon has one
// watcher per cluster, nearly all idle), and still corrects the next
// drift.
func TestDriftWatcherIdleHoldsNoWorkers(t *testing.T) {
	ns := "drift-idle"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	req := apply.Request{Profile: "drift-idle", RenderHash: "h1", SyncMode: spec.SyncModeContinuousWithDriftDetection,
		Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "cm", map[string]string{"v": "1"}))}}
	mustApplied(t, c.Apply(t.Context(), req))
	idle := func() bool { return driftWorkers() == 0 }
	testenv.WaitFor(t, 30*time.Second, "no drift worker goroutine while idle", idle)
	mergePatch(t, k, getCM(t, k, ns, "cm"), `{"data":{"v":"changed"}}`)
	testenv.WaitFor(t, 10*time.Second, "edited ConfigMap restored", func() bool { return getCM(t, k, ns, "cm").Data["v"] == "1" })
	testenv.WaitFor(t, 30*time.Second, "no drift worker goroutine after the correction", idle)
}

// driftWorkers counts the goroutines of drift watchers' work queues.
func driftWorkers() int {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	n := 0
	for _, g := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(g, "apply.(*DriftWatcher)") && strings.Contains(g, "workqueue") ||
			strings.Contains(g, "apply.(*driftQueue).work") {
			n++
		}
	}
	return n
}
