package apply_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
)

// asyncRequest is a profile of two add-ons: a Deployment, then a ConfigMap
// that must wait for it.
func asyncRequest(t *testing.T, ns, profile string, timeout time.Duration) apply.Request {
	t.Helper()
	deploy := objects(t, "deployment.yaml", "NAMESPACE", ns, "NAME", "web")
	return apply.Request{
		Profile:       profile,
		Revision:      "r1",
		RenderHash:    "h1",
		HealthTimeout: timeout,
		Async:         true,
		Steps: []apply.Step{
			step("ns", namespace(ns)),
			step("web", deploy...),
			step("after", configMap(ns, "after-web", map[string]string{"v": "1"})),
		},
	}
}

// TestAsyncHealthHoldsNothing: with Request.Async, an add-on that is not
// healthy yet ends the Apply at once as Progressing, without applying the
// next add-on; PollHealth says nothing until the Deployment is ready, then
// names the cluster (once its health watch saw the status); the next Apply
// resumes at that add-on without re-applying the ones before, and goes on
// to the next.
func TestAsyncHealthHoldsNothing(t *testing.T) {
	opts, counter := countedOptions()
	m := newManager(t, opts)
	c := target(t, m, mainCluster)
	k := kube(t, mainCluster)
	req := asyncRequest(t, "async-health", "async-health", 5*time.Minute)

	res := c.Apply(t.Context(), req)
	if res.State != apply.StateProgressing || !strings.Contains(res.Waiting, "add-on web: waiting until") ||
		!strings.Contains(res.Waiting, "Deployment/async-health/web") {
		t.Fatalf("first apply: %s %q %v", res.State, res.Waiting, res.Err)
	}
	if getCM(t, k, "async-health", "after-web") != nil {
		t.Fatal("the add-on after an unhealthy one was applied")
	}
	if !c.Awaiting() || !m.Awaiting() {
		t.Fatal("the cluster does not say it waits for health")
	}
	var ready atomic.Int32
	m.PollHealth(t.Context(), func(string) { ready.Add(1) })
	if ready.Load() != 0 {
		t.Fatal("PollHealth reported a change while the Deployment is not ready")
	}
	if err := markReady(t.Context(), k, "async-health", "web"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "PollHealth to report the ready Deployment", func() bool {
		m.PollHealth(t.Context(), func(cluster string) {
			if cluster == mainCluster {
				ready.Add(1)
			}
		})
		return ready.Load() > 0
	})
	counter.reset()
	res = c.Apply(t.Context(), req)
	mustApplied(t, res)
	if getCM(t, k, "async-health", "after-web") == nil {
		t.Fatal("the next add-on was not applied once the Deployment was ready")
	}
	if n := counter.reset(); n["PATCH"] > 3 {
		t.Errorf("resuming re-applied earlier add-ons: %v", n)
	}
	if c.Awaiting() {
		t.Error("still waiting after the pair was applied")
	}
}

// TestAsyncHealthPollReadsOnlyWhatIsNotHealthy: between passes, the
// health of an awaiting add-on follows the objects that were not healthy
// (the Deployment, watched), not the ConfigMaps beside it that were
// healthy as applied: a poll reads none of them.
func TestAsyncHealthPollReadsOnlyWhatIsNotHealthy(t *testing.T) {
	opts, counter := countedOptions()
	m := newManager(t, opts)
	c := target(t, m, mainCluster)
	k := kube(t, mainCluster)
	const ns = "async-poll-reads"
	web := objects(t, "deployment.yaml", "NAMESPACE", ns, "NAME", "web")
	for i := range 5 {
		web = append(web, configMap(ns, fmt.Sprintf("beside-%d", i), map[string]string{"v": "1"}))
	}
	req := apply.Request{Profile: ns, Revision: "r1", RenderHash: "h1", HealthTimeout: 5 * time.Minute, Async: true,
		Steps: []apply.Step{step("ns", namespace(ns)), step("web", web...)}}
	if res := c.Apply(t.Context(), req); res.State != apply.StateProgressing {
		t.Fatalf("first apply: %s %q %v", res.State, res.Waiting, res.Err)
	}
	counter.reset()
	m.PollHealth(t.Context(), func(string) {})
	// The Deployment is watched (at most its list, when the watch starts
	// late, shows here): no GET of the five ConfigMaps, nor a list of its
	// ReplicaSets (kstatus's reader lists them, and their Pods).
	if n := counter.reset(); n["GET"] > 1 {
		t.Errorf("the poll made %d GETs, want none (the Deployment is watched), none for the healthy ConfigMaps or ReplicaSets: %v", n["GET"], n)
	}
	if err := markReady(t.Context(), k, ns, "web"); err != nil {
		t.Fatal(err)
	}
	var ready atomic.Int32
	testenv.WaitFor(t, 10*time.Second, "PollHealth to report the ready Deployment", func() bool {
		m.PollHealth(t.Context(), func(string) { ready.Add(1) })
		return ready.Load() > 0
	})
	mustApplied(t, c.Apply(t.Context(), req))
}

// TestAsyncHealthDeadline: past its health timeout an add-on that is not
// healthy makes the pair Failed (not Progressing), PollHealth reports the
// deadline once, and the cluster no longer counts as waiting.
func TestAsyncHealthDeadline(t *testing.T) {
	m := newManager(t, testOptions())
	c := target(t, m, mainCluster)
	req := asyncRequest(t, "async-deadline", "async-deadline", time.Second)
	if res := c.Apply(t.Context(), req); res.State != apply.StateProgressing {
		t.Fatalf("first apply: %s %v", res.State, res.Err)
	}
	var reported atomic.Int32
	testenv.WaitFor(t, 10*time.Second, "the deadline to be reported", func() bool {
		m.PollHealth(t.Context(), func(string) { reported.Add(1) })
		return reported.Load() > 0
	})
	if c.Awaiting() {
		t.Error("a step past its deadline still counts as waiting")
	}
	res := c.Apply(t.Context(), req)
	var he *apply.HealthError
	if res.State != apply.StateFailed || !errors.As(res.Err, &he) || he.Degraded {
		t.Fatalf("after the deadline: %s %v", res.State, res.Err)
	}
	if !strings.Contains(res.Error, "not healthy within 1s") {
		t.Errorf("error = %q", res.Error)
	}
	before := reported.Load()
	m.PollHealth(t.Context(), func(string) { reported.Add(1) })
	if reported.Load() != before {
		t.Error("a deadline was reported twice")
	}
}

// TestAsyncHealthOfAScriptedKindReadsTheObjectAlone: when a health script
// judges a kind (a StatefulSet here, as regatta's built-in one does), its
// health is judged from the object alone: kstatus's StatefulSet reader
// would also list its Pods, for a verdict the script replaces. The
// StatefulSet is watched, so a poll does not read it either.
func TestAsyncHealthOfAScriptedKindReadsTheObjectAlone(t *testing.T) {
	opts, log := loggedOptions(nil)
	m := newManager(t, opts)
	c := target(t, m, mainCluster)
	const ns = "async-scripted-reads"
	sts := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "db", "namespace": ns},
		"spec": map[string]any{
			"serviceName": "db", "replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "db"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "db"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "db", "image": "registry.example/db:1"}}},
			},
		},
	}}
	hc := kindHealth{kinds: map[string]bool{"StatefulSet": true}, status: apply.HealthProgressing}
	req := apply.Request{Profile: ns, Revision: "r1", RenderHash: "h1", HealthTimeout: 5 * time.Minute, Async: true,
		Health: hc, Steps: []apply.Step{step("ns", namespace(ns)), step("db", sts)}}
	if res := c.Apply(t.Context(), req); res.State != apply.StateProgressing || !strings.Contains(res.Waiting, "from the script") {
		t.Fatalf("first apply: %s %q %v", res.State, res.Waiting, res.Err)
	}
	m.PollHealth(t.Context(), func(string) {})
	pods := log.count(func(r loggedRequest) bool { return strings.HasSuffix(r.path, "/pods") })
	gets := log.count(func(r loggedRequest) bool {
		return r.method == http.MethodGet && r.path == "/apis/apps/v1/namespaces/"+ns+"/statefulsets/db"
	})
	if pods != 0 || gets > 1 {
		t.Errorf("%d reads of Pods and %d GETs of the StatefulSet; want none (the object alone, watched; one GET as applied)", pods, gets)
	}
}
