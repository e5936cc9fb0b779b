package apply_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
)

// A Deployment that is not Ready holds back the next add-on until the test
// marks it Ready; every object carries the ownership labels.
func TestApplyWaitsForHealthBeforeNextAddon(t *testing.T) {
	ns := "gate"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	req := apply.Request{Profile: "gate", Revision: "r1", RenderHash: "h1", Steps: []apply.Step{
		step("infra", append([]*unstructured.Unstructured{namespace(ns)}, objects(t, "deployment.yaml", "NAMESPACE", ns, "NAME", "web")...)...),
		step("app", configMap(ns, "after-web", map[string]string{"k": "v"})),
	}}
	done := make(chan apply.Result, 1)
	go func() { done <- c.Apply(t.Context(), req) }()

	testenv.WaitFor(t, 20*time.Second, "Deployment gate/web", func() bool { return get(t, k, deployGVK, ns, "web") != nil })
	testenv.HoldsFor(t, 2*time.Second, "add-on app waits for the Deployment of add-on infra to be Ready", func() bool {
		return getCM(t, k, ns, "after-web") == nil && len(done) == 0
	})
	if err := markReady(t.Context(), k, ns, "web"); err != nil {
		t.Fatal(err)
	}
	res := <-done
	mustApplied(t, res)
	if res.Counts.Created != 3 || res.Health.Healthy != 3 {
		t.Errorf("counts %+v health %+v; want 3 created, 3 healthy", res.Counts, res.Health)
	}
	cm := getCM(t, k, ns, "after-web")
	want := map[string]string{apply.LabelProfile: "gate", apply.LabelAddon: "app", apply.LabelCluster: mainCluster}
	for key, v := range want {
		if cm == nil || cm.Labels[key] != v {
			t.Errorf("ConfigMap after-web label %s = %q, want %q", key, cm.Labels[key], v)
		}
	}
}

// Health timeouts: continueOnError false stops at the first failing add-on
// (Progressing: nothing degraded); true goes on and reports every error.
func TestApplyContinueOnError(t *testing.T) {
	ns := "coe"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	badCM := configMap(ns, "bad", nil)
	badCM.Object["data"] = map[string]any{"not a valid key!": "x"}
	steps := func() []apply.Step {
		return []apply.Step{
			step("ns", namespace(ns)),
			step("slow", objects(t, "deployment.yaml", "NAMESPACE", ns, "NAME", "never-ready")...),
			step("broken", badCM),
			step("last", configMap(ns, "last", nil)),
		}
	}
	res := c.Apply(t.Context(), apply.Request{Profile: "coe", RenderHash: "h1", HealthTimeout: time.Second, Steps: steps()})
	if res.State != apply.StateProgressing || getCM(t, k, ns, "last") != nil {
		t.Fatalf("continueOnError=false: state %s (want Progressing), last applied: %v", res.State, getCM(t, k, ns, "last") != nil)
	}
	if !strings.Contains(res.Error, "cluster main: profile coe: add-on slow:") ||
		!strings.Contains(res.Error, "Deployment/coe/never-ready") {
		t.Errorf("error %q does not name cluster, profile, add-on and Deployment", res.Error)
	}

	res = c.Apply(t.Context(), apply.Request{Profile: "coe", RenderHash: "h2", HealthTimeout: time.Second,
		ContinueOnError: true, Steps: steps()})
	if res.State != apply.StateFailed || getCM(t, k, ns, "last") == nil {
		t.Fatalf("continueOnError=true: state %s (want Failed), last applied: %v", res.State, getCM(t, k, ns, "last") != nil)
	}
	for _, want := range []string{"add-on slow:", "add-on broken:", "ConfigMap/coe/bad"} {
		if !strings.Contains(res.Error, want) {
			t.Errorf("error %q lacks %q", res.Error, want)
		}
	}
	var pe *apply.PairError
	if !errors.As(res.Err, &pe) || pe.Cluster != mainCluster || pe.Profile != "coe" {
		t.Errorf("error is not a PairError naming the pair: %#v", res.Err)
	}
}

// fakeHealth is a HealthChecker for ConfigMaps: it reports the status held
// in the ConfigMap's "health" data key.
type fakeHealth struct{ calls atomic.Int32 }

func (f *fakeHealth) Check(_ context.Context, obj *unstructured.Unstructured) (string, string, bool, error) {
	if obj.GetKind() != "ConfigMap" {
		return "", "", false, nil
	}
	f.calls.Add(1)
	st, _, _ := unstructured.NestedString(obj.Object, "data", "health")
	return st, "from the override", true, nil
}

// A HealthChecker overrides kstatus for the kinds it knows.
func TestApplyHealthCheckerOverride(t *testing.T) {
	ns := "override"
	m := newManager(t, testOptions())
	c := target(t, m, mainCluster)
	hc := &fakeHealth{}
	run := func(hash, health string, timeout time.Duration) apply.Result {
		return c.Apply(t.Context(), apply.Request{Profile: "override", Health: hc, HealthTimeout: timeout, RenderHash: hash,
			Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "probe", map[string]string{"health": health}))}})
	}
	if res := run("h1", apply.HealthHealthy, 10*time.Second); res.State != apply.StateApplied || hc.calls.Load() == 0 {
		t.Fatalf("Healthy: state %s, %d checks", res.State, hc.calls.Load())
	}
	start := time.Now()
	res := run("h2", apply.HealthDegraded, 20*time.Second)
	if res.State != apply.StateFailed || res.Health.Degraded != 1 || time.Since(start) > 10*time.Second ||
		!strings.Contains(res.Error, "ConfigMap/override/probe: Failed: from the override") {
		t.Errorf("Degraded: state %s, health %+v after %s (want Failed before the timeout): %s",
			res.State, res.Health, time.Since(start), res.Error)
	}
	if res = run("h3", apply.HealthProgressing, time.Second); res.State != apply.StateProgressing {
		t.Errorf("Progressing: state %s, want Progressing", res.State)
	}
	if res = run("h4", apply.HealthSuspended, 10*time.Second); res.State != apply.StateApplied || res.Health.Suspended != 1 {
		t.Errorf("Suspended: state %s, health %+v", res.State, res.Health)
	}
}

// A CRD and its custom resource in one add-on: the CRD first, then the CR;
// withdrawal deletes the CR before the CRD.
func TestApplyCRDAndCustomResource(t *testing.T) {
	ns := "crd"
	m := newManager(t, testOptions())
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	objs := objects(t, "crd.yaml", "NAMESPACE", ns, "SUFFIX", "a")
	res := c.Apply(t.Context(), apply.Request{Profile: "crd", RenderHash: "h1", Steps: []apply.Step{step("widgets", objs...)}})
	mustApplied(t, res)
	cr := get(t, k, objs[1].GroupVersionKind(), ns, "w1")
	if cr == nil || cr.GetLabels()[apply.LabelProfile] != "crd" {
		t.Fatalf("custom resource not applied with labels: %v", cr)
	}
	res = c.Withdraw(t.Context(), "crd", "")
	if res.State != apply.StateWithdrawn {
		t.Fatalf("withdraw: %s", res)
	}
	order := map[string]int{}
	for i, ch := range res.Changes {
		order[ch.Object.Kind] = i
	}
	if !(order["Widgeta"] < order["CustomResourceDefinition"] && order["Widgeta"] < order["Namespace"]) {
		t.Errorf("deletion order:\n%s", changes(res))
	}
}
