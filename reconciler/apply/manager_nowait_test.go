package apply_test

import (
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

// A step with NoWait (an add-on's wait: false) is applied without waiting
// for its health: the next add-on goes on although the Deployment never
// becomes Ready, long before the health timeout.
func TestApplyNoWaitGoesOn(t *testing.T) {
	ns := "nowait"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	slow := step("slow", objects(t, "deployment.yaml", "NAMESPACE", ns, "NAME", "never-ready")...)
	slow.NoWait = true
	req := apply.Request{Profile: "nowait", RenderHash: "h1", HealthTimeout: time.Minute, Steps: []apply.Step{
		step("ns", namespace(ns)),
		slow,
		step("after", configMap(ns, "after-slow", nil)),
	}}
	start := time.Now()
	res := c.Apply(t.Context(), req)
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("Apply took %s: it waited for the wait: false add-on", took)
	}
	if getCM(t, k, ns, "after-slow") == nil {
		t.Fatalf("the add-on after the wait: false add-on was not applied: %s", res)
	}
	// Applied, so that profiles depending on this one go on too.
	if res.State != apply.StateApplied {
		t.Errorf("state %s, want %s: %s", res.State, apply.StateApplied, res.Error)
	}

	// The daemon's non-blocking health (Async) goes on past it too.
	req.Async, req.RenderHash = true, "h-async"
	req.Steps[2] = step("after", configMap(ns, "after-slow-async", nil))
	res = c.Apply(t.Context(), req)
	if res.State != apply.StateApplied || getCM(t, k, ns, "after-slow-async") == nil {
		t.Errorf("async: state %s (%s), next add-on applied: %v", res.State, res.Waiting, getCM(t, k, ns, "after-slow-async") != nil)
	}
	req.Async = false

	// Without NoWait the same profile waits and times out.
	slow.NoWait = false
	req.Steps[1], req.RenderHash, req.HealthTimeout = slow, "h2", time.Second
	req.Steps[2] = step("after", configMap(ns, "after-slow-2", nil))
	res = c.Apply(t.Context(), req)
	if getCM(t, k, ns, "after-slow-2") != nil || res.State != apply.StateProgressing {
		t.Errorf("with wait: state %s, next add-on applied: %v", res.State, getCM(t, k, ns, "after-slow-2") != nil)
	}
}
