package apply_test

import (
	"bytes"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
)

// The health wait tests run on ctlCluster, where a Deployment becomes
// Available through its ReplicaSet and a kwok Pod, never by a status the
// test writes; they count the requests of the Manager's clients.

// loggedRequest is one request of a Manager's clients and its answer.
type loggedRequest struct {
	method, path string
	watch        bool
	status       int
}

// answerLog records the requests and answers of a Manager's clients; rewrite, when
// set, may change a request before it is sent.
type answerLog struct {
	mu      sync.Mutex
	reqs    []loggedRequest
	rewrite func(*http.Request)
}

func loggedOptions(rewrite func(*http.Request)) (apply.Options, *answerLog) {
	l := &answerLog{rewrite: rewrite}
	opts := testOptions()
	opts.Client.WrapTransport = func(_ string, rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if l.rewrite != nil {
				l.rewrite(req)
			}
			resp, err := rt.RoundTrip(req)
			r := loggedRequest{method: req.Method, path: req.URL.Path, watch: req.URL.Query().Get("watch") == "true"}
			if resp != nil {
				r.status = resp.StatusCode
			}
			l.mu.Lock()
			l.reqs = append(l.reqs, r)
			l.mu.Unlock()
			return resp, err
		})
	}
	return opts, l
}

// count returns the number of requests that match.
func (l *answerLog) count(match func(loggedRequest) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reqs {
		if match(r) {
			n++
		}
	}
	return n
}

func (l *answerLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = nil
}

func deploymentsPath(ns string) string { return "/apis/apps/v1/namespaces/" + ns + "/deployments" }

// getOf matches a GET of one Deployment (what a poll reads).
func getOf(ns, name string) func(loggedRequest) bool {
	return func(r loggedRequest) bool {
		return r.method == http.MethodGet && r.path == deploymentsPath(ns)+"/"+name
	}
}

// watchOf matches a watch of a namespace's Deployments.
func watchOf(ns string) func(loggedRequest) bool {
	return func(r loggedRequest) bool { return r.watch && r.path == deploymentsPath(ns) }
}

// readsOf returns the reads of a namespace's Deployments that are not
// watches (GETs, lists) and the watches. A poll reads them every poll
// interval (kstatus's poller lists the kind, a health poll between passes
// GETs the object); a watch lists once before it starts.
func readsOf(l *answerLog, ns string) (reads, watches int) {
	reads = l.count(func(r loggedRequest) bool {
		return !r.watch && r.method == http.MethodGet && strings.HasPrefix(r.path, deploymentsPath(ns))
	})
	return reads, l.count(watchOf(ns))
}

// listOf matches a list of a namespace's Deployments answered with status.
func listOf(ns string, status int) func(loggedRequest) bool {
	return func(r loggedRequest) bool {
		return !r.watch && r.method == http.MethodGet && r.path == deploymentsPath(ns) && r.status == status
	}
}

// workload is a Deployment of one replica running image; it is Available
// once its Pod has been ready for minReady seconds.
func workload(ns, name, image string, minReady int64) *unstructured.Unstructured {
	labels := map[string]any{"app": name}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"replicas": int64(1), "minReadySeconds": minReady,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}},
			},
		},
	}}
}

// mustAvailable fails unless the Deployment is Available now.
func mustAvailable(t *testing.T, k client.Client, ns, name string) {
	t.Helper()
	var d appsv1.Deployment
	if err := k.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
		t.Fatal(err)
	}
	if !testenv.DeploymentAvailable(&d) {
		t.Fatalf("Deployment %s/%s is not Available: %+v", ns, name, d.Status)
	}
}

// healthWatchGoroutines returns whether a goroutine of a health watch runs.
func healthWatchGoroutines() bool {
	buf := make([]byte, 16<<20)
	n := runtime.Stack(buf, true)
	return bytes.Contains(buf[:n], []byte("apply.(*healthWatch)"))
}

// TestHealthWaitWatchesInsteadOfPolling: the wait for a Deployment that
// becomes Available by itself watches it: one list before each watch and
// not one GET of the Deployment (a poll reads it every HealthPollInterval,
// 200 ms here), the wait ends with the Deployment Available, and no
// goroutine of the wait is left. The poll interval is ten minutes: a
// poll would not see the Deployment Available within the health timeout.
func TestHealthWaitWatchesInsteadOfPolling(t *testing.T) {
	opts, log := loggedOptions(nil)
	opts.HealthPollInterval = 10 * time.Minute
	m := newManager(t, opts)
	c := target(t, m, ctlCluster)
	const ns = "health-watch"
	req := apply.Request{Profile: ns, Revision: "r1", RenderHash: "h1", HealthTimeout: time.Minute,
		Steps: []apply.Step{step("ns", namespace(ns)), step("web", workload(ns, "web", "registry.test/app:1", 1))}}
	mustApplied(t, c.Apply(t.Context(), req))
	mustAvailable(t, kube(t, ctlCluster), ns, "web")
	if n := log.count(getOf(ns, "web")); n != 0 {
		t.Errorf("the wait read the Deployment %d times; want 0 (watched)", n)
	}
	if reads, watches := readsOf(log, ns); watches == 0 || reads > watches+1 {
		t.Errorf("%d reads and %d watches of the Deployments; want a watch, and a list before each only (and one the wait may end on)", reads, watches)
	}
	if healthWatchGoroutines() {
		t.Error("a health watch goroutine outlived the wait")
	}
}

// TestHealthWaitTimesOutWithTheSameMessage: a Deployment whose Pod never
// becomes ready times out with the message of ssa's wait, read through
// the watch (one list, no GET of the Deployment).
func TestHealthWaitTimesOutWithTheSameMessage(t *testing.T) {
	opts, log := loggedOptions(nil)
	m := newManager(t, opts)
	c := target(t, m, ctlCluster)
	const ns = "health-watch-timeout"
	req := apply.Request{Profile: ns, Revision: "r1", RenderHash: "h1", HealthTimeout: 3 * time.Second,
		Steps: []apply.Step{step("ns", namespace(ns)), step("stuck", workload(ns, "stuck", "registry.test/never-ready:1", 0))}}
	res := c.Apply(t.Context(), req)
	var he *apply.HealthError
	if !errors.As(res.Err, &he) || he.Degraded {
		t.Fatalf("state %s, error %v; want a health timeout", res.State, res.Err)
	}
	if want := "not healthy within 3s: Deployment/" + ns + "/stuck: InProgress"; !strings.Contains(res.Error, want) {
		t.Errorf("error %q does not say %q", res.Error, want)
	}
	if want := "timeout waiting for: [Deployment/" + ns + "/stuck status: 'InProgress']"; he.Err == nil || he.Err.Error() != want {
		t.Errorf("wait error %v, want %q", he.Err, want)
	}
	if reads, watches := readsOf(log, ns); watches == 0 || reads > watches+1 {
		t.Errorf("%d reads and %d watches of the Deployments; want a watch, and a list before each only (and one the wait may end on)", reads, watches)
	}
	if healthWatchGoroutines() {
		t.Error("a health watch goroutine outlived the wait")
	}
}

// TestHealthWatchClosedByServerRecovers: the server ends every watch of
// the Deployments after a second (timeoutSeconds=1); the Deployment is
// Available only after its Pod was ready for 3 s, so the wait outlives
// several watches: each closed one is listed and watched again, and the
// wait still ends Available without a GET of the Deployment.
func TestHealthWatchClosedByServerRecovers(t *testing.T) {
	const ns = "health-watch-closed"
	opts, log := loggedOptions(func(req *http.Request) {
		if q := req.URL.Query(); q.Get("watch") == "true" && req.URL.Path == deploymentsPath(ns) {
			q.Set("timeoutSeconds", "1")
			req.URL.RawQuery = q.Encode()
		}
	})
	m := newManager(t, opts)
	c := target(t, m, ctlCluster)
	req := apply.Request{Profile: ns, Revision: "r1", RenderHash: "h1", HealthTimeout: 2 * time.Minute,
		Steps: []apply.Step{step("ns", namespace(ns)), step("web", workload(ns, "web", "registry.test/app:1", 3))}}
	mustApplied(t, c.Apply(t.Context(), req))
	mustAvailable(t, kube(t, ctlCluster), ns, "web")
	if n := log.count(watchOf(ns)); n < 2 {
		t.Errorf("%d watches of the Deployments; want a new one after the server closed the first", n)
	}
	if n := log.count(listOf(ns, http.StatusOK)); n < 2 {
		t.Errorf("%d lists of the Deployments; want one again after a closed watch", n)
	}
	if reads, watches := readsOf(log, ns); reads > watches+1 {
		t.Errorf("%d reads and %d watches of the Deployments; want a list before each watch only (and one the wait may end on)", reads, watches)
	}
}

// TestHealthWaitPollsWhatItMayNotWatch: a namespace-scoped entry whose
// RBAC lets it read and apply Deployments but not watch them: the watch is
// refused, the wait falls back to polling the Deployment and ends once it
// is Available.
func TestHealthWaitPollsWhatItMayNotWatch(t *testing.T) {
	const ns = "health-watch-rbac"
	kc, err := env.Cluster(ctlCluster).NamespaceUser(t.Context(), "no-watch", []string{ns}, "")
	if err != nil {
		t.Fatal(err)
	}
	k := kube(t, ctlCluster)
	role := &rbacv1.Role{}
	if err := k.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "no-watch"}, role); err != nil {
		t.Fatal(err)
	}
	role.Rules = []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "create", "update", "patch", "delete"}},
	}
	if err := k.Update(t.Context(), role); err != nil {
		t.Fatal(err)
	}
	opts, log := loggedOptions(nil)
	m := newManager(t, opts)
	c, err := m.Cluster("no-watch", kc)
	if err != nil {
		t.Fatal(err)
	}
	c.SetNamespaces([]string{ns})
	req := apply.Request{Profile: ns, Revision: "r1", RenderHash: "h1", HealthTimeout: 2 * time.Minute,
		Steps: []apply.Step{step("web", workload(ns, "web", "registry.test/app:1", 1))}}
	mustApplied(t, c.Apply(t.Context(), req))
	mustAvailable(t, k, ns, "web")
	if log.count(func(r loggedRequest) bool { return watchOf(ns)(r) && r.status == http.StatusForbidden }) == 0 {
		t.Error("the wait did not try to watch the Deployments")
	}
	if log.count(getOf(ns, "web")) == 0 {
		t.Error("the wait did not poll the Deployment it may not watch")
	}
	if healthWatchGoroutines() {
		t.Error("a health watch goroutine outlived the wait")
	}
}

// TestAsyncHealthWatchQueuesAtOnce: an Async step waiting for a Deployment
// is watched between passes: the cluster is named to the ready function
// PollHealth was given as soon as the Deployment is Available, without
// another PollHealth; a PollHealth then reads nothing, nor does the pass
// that resumes; the watch ends with the wait.
func TestAsyncHealthWatchQueuesAtOnce(t *testing.T) {
	opts, log := loggedOptions(nil)
	m := newManager(t, opts)
	c := target(t, m, ctlCluster)
	const ns = "health-watch-async"
	var ready atomic.Int32
	m.PollHealth(t.Context(), func(cluster string) {
		if cluster == ctlCluster {
			ready.Add(1)
		}
	})
	req := apply.Request{Profile: ns, Revision: "r1", RenderHash: "h1", HealthTimeout: 2 * time.Minute, Async: true,
		Steps: []apply.Step{step("ns", namespace(ns)), step("web", workload(ns, "web", "registry.test/app:1", 1)),
			step("after", configMap(ns, "after-web", map[string]string{"v": "1"}))}}
	if res := c.Apply(t.Context(), req); res.State != apply.StateProgressing {
		t.Fatalf("first apply: %s %q %v", res.State, res.Waiting, res.Err)
	}
	testenv.WaitFor(t, time.Minute, "the watch to name the cluster", func() bool { return ready.Load() > 0 })
	mustAvailable(t, kube(t, ctlCluster), ns, "web")
	log.reset()
	before := ready.Load()
	m.PollHealth(t.Context(), func(string) { ready.Add(1) })
	if ready.Load() != before+1 {
		t.Error("PollHealth did not name the cluster whose Deployment is Available")
	}
	mustApplied(t, c.Apply(t.Context(), req))
	if n := log.count(getOf(ns, "web")); n != 0 {
		t.Errorf("the poll and the resumed pass read the Deployment %d times; want 0 (watched)", n)
	}
	if getCM(t, kube(t, ctlCluster), ns, "after-web") == nil {
		t.Fatal("the next add-on was not applied")
	}
	testenv.WaitFor(t, 10*time.Second, "the health watch to end", func() bool { return !healthWatchGoroutines() })
}
