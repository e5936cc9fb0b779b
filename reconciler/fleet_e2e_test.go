package reconciler

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// runDaemon runs h's daemon loop until the test ends.
func runDaemon(t *testing.T, h *harness) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// statusOf returns a cluster's status file on the status branch, "" when
// there is none yet.
func (f *fleetRepo) statusOf(cluster string) string {
	return f.Lookup("regatta/status", "status/clusters/"+cluster+".yaml")
}

// pairRecord returns the status record of one pair from the daemon's
// status store.
func (h *harness) pairRecord(cluster, profile string) status.Profile {
	c, _ := h.d.store.cluster(cluster)
	for _, p := range c.Profiles {
		if p.Name == profile {
			return p
		}
	}
	return status.Profile{}
}

// TestOneStuckClusterHoldsNoOne: of three clusters, one has an add-on that
// never becomes healthy (health timeout 5m). A commit changing another
// profile reaches all three clusters — the stuck one's other profile too —
// and the status branch, while the stuck pair still waits.
func TestOneStuckClusterHoldsNoOne(t *testing.T) {
	f := newFleetRepo(t)
	files := map[string]string{
		"profiles/stuck.yaml": profileYAML("stuck", "stuck: \"yes\"", "  healthTimeout: 5m\n  addons:\n  - name: stuck\n    manifests: {path: stuck}\n"),
		"stuck/deploy.yaml":   deployment("default", "never-ready"),
		"profiles/app.yaml":   profileYAML("app", "fleet: one", "  addons:\n  - name: cm\n    manifests: {path: app}\n"),
		"app/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stuck-fleet-app, namespace: default}\ndata: {v: \"1\"}\n",
	}
	for name, labels := range map[string]string{"c35": "fleet: one", "c36": "fleet: one", "c37": "fleet: one, stuck: \"yes\""} {
		for k, v := range clusterFiles(t, name, labels) {
			files[k] = v
		}
	}
	f.Commit("fleet", files)
	h := newHarness(t, f, func(o *DaemonOptions) {
		o.Watch.Interval, o.Watch.DisableFSNotify = time.Hour, true
	})
	runDaemon(t, h)
	clusters := []string{"c35", "c36", "c37"}
	testenv.WaitFor(t, 60*time.Second, "app v1 everywhere", func() bool {
		for _, c := range clusters {
			if configMap(t, c, "default", "stuck-fleet-app")["v"] != "1" {
				return false
			}
		}
		return true
	})
	testenv.WaitFor(t, 30*time.Second, "the stuck pair to wait for health", func() bool {
		return h.pairRecord("c37", "stuck").State == status.StateProgressing
	})

	rev2 := f.Commit("app v2", map[string]string{"app/cm.yaml": strings.Replace(files["app/cm.yaml"], `"1"`, `"2"`, 1)})
	h.d.Trigger()
	testenv.WaitFor(t, 30*time.Second, "app v2 on every cluster, the stuck one too", func() bool {
		for _, c := range clusters {
			if configMap(t, c, "default", "stuck-fleet-app")["v"] != "2" {
				return false
			}
		}
		return true
	})
	testenv.WaitFor(t, 30*time.Second, "the status branch to record app v2", func() bool {
		for _, c := range clusters {
			if !strings.Contains(f.statusOf(c), "sourceRevision: "+rev2) {
				return false
			}
		}
		return true
	})
	st := h.pairRecord("c37", "stuck")
	if st.State != status.StateProgressing || !strings.Contains(st.Message, "Deployment/default/never-ready") {
		t.Errorf("stuck pair while the fleet moved on: %+v", st)
	}
	if !strings.Contains(f.statusOf("c37"), "name: stuck\n    state: Progressing") {
		t.Errorf("the status branch does not show the stuck pair progressing:\n%s", f.statusOf("c37"))
	}
}

// TestCommitMidChainReplans: a commit lands while a dependsOn chain waits
// for a slow health check; the cluster re-plans on it, and nothing of the
// superseded revision is applied afterwards: the dependent's ConfigMap is
// only ever seen with the newer revision's data.
func TestCommitMidChainReplans(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{
		"profiles/slow.yaml": profileYAML("slow", "env: prod", "  healthTimeout: 5m\n  addons:\n  - name: slow\n    manifests: {path: slow}\n"),
		"slow/deploy.yaml":   deployment("default", "chain-slow"),
		"profiles/next.yaml": profileYAML("next", "env: prod", "  dependsOn: [slow]\n  addons:\n  - name: next\n    manifests: {path: next}\n"),
		"next/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chain-next, namespace: default}\ndata: {v: \"1\"}\n",
	}
	f, _ := oneClusterFleet(t, files)
	h := newHarness(t, f, func(o *DaemonOptions) {
		o.StatusBranch = ""
		o.Watch.Interval, o.Watch.DisableFSNotify = time.Hour, true
	})
	seen := watchConfigMap(t, "c37", "default", "chain-next")
	runDaemon(t, h)
	testenv.WaitFor(t, 30*time.Second, "next to wait for slow", func() bool {
		return h.pairRecord("c37", "next").State == status.StateWaitingForDependency
	})
	f.Commit("next v2", map[string]string{"next/cm.yaml": strings.Replace(files["next/cm.yaml"], `"1"`, `"2"`, 1)})
	h.d.Trigger()
	testenv.WaitFor(t, 30*time.Second, "the cluster to re-plan on the new revision", func() bool {
		c, _ := h.d.store.cluster("c37")
		return c.SourceRevision == h.d.r.current().sha && h.d.r.current().sha != ""
	})
	markReady(t, "c37", "default", "chain-slow")
	testenv.WaitFor(t, 30*time.Second, "next v2", func() bool {
		return configMap(t, "c37", "default", "chain-next")["v"] == "2"
	})
	for _, v := range seen() {
		if v != "2" {
			t.Errorf("the dependent was applied with the superseded revision's data (v=%s)", v)
		}
	}
	if _, err := clientset(t, "c37").AppsV1().Deployments("default").Get(ctx, "chain-slow", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// watchConfigMap records every data.v a ConfigMap is seen with.
func watchConfigMap(t *testing.T, cluster, ns, name string) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := clientset(t, cluster).CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	go func() {
		for ev := range w.ResultChan() {
			if c, ok := ev.Object.(*corev1.ConfigMap); ok && c.Name == name {
				mu.Lock()
				seen = append(seen, c.Data["v"])
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// writeCounter counts the requests that write (everything but GET, LIST,
// WATCH and dry-runs) per cluster.
type writeCounter struct {
	mu     sync.Mutex
	writes map[string]int
	all    map[string]int // every request, by cluster
	paths  []string
}

func newWriteCounter() *writeCounter {
	return &writeCounter{writes: map[string]int{}, all: map[string]int{}}
}

func (w *writeCounter) requests(cluster string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all[cluster]
}

func (w *writeCounter) wrap(cluster string, rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		w.mu.Lock()
		w.all[cluster]++
		w.mu.Unlock()
		if req.Method != http.MethodGet && req.Method != http.MethodHead && req.URL.Query().Get("dryRun") == "" {
			w.mu.Lock()
			w.writes[cluster]++
			w.paths = append(w.paths, req.Method+" "+req.URL.Path)
			w.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (w *writeCounter) total() (int, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, v := range w.writes {
		n += v
	}
	return n, append([]string(nil), w.paths...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestRestartAppliesNothing: a fresh daemon on an applied, unchanged fleet
// sends no write request to any cluster, reports what is there, and still
// corrects drift that happened while no daemon ran.
func TestRestartAppliesNothing(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	files := baseFleet(t, "restart")
	files["profiles/drifty.yaml"] = profileYAML("drifty", "env: prod", "  syncMode: ContinuousWithDriftDetection\n  addons:\n  - name: cm\n    manifests: {path: drifty}\n")
	files["drifty/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: restart-drifty, namespace: default}\ndata: {v: \"desired\"}\n"
	files["profiles/once.yaml"] = profileYAML("once", "env: prod", "  syncMode: OneTime\n  addons:\n  - name: cm\n    manifests: {path: once}\n")
	files["once/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: restart-once, namespace: default}\ndata: {v: \"1\"}\n"
	rev1 := f.Commit("fleet", files)
	first := newHarness(t, f, nil)
	if res, err := first.d.RunOnce(ctx); err != nil {
		t.Fatalf("first rollout: %v %+v", err, res.Snapshot)
	}
	rev2 := f.Commit("once v2 (OneTime: not applied)", map[string]string{"once/cm.yaml": strings.Replace(files["once/cm.yaml"], `"1"`, `"2"`, 1)})
	if _, err := first.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	first.d.Close()
	cm := configMapObj(t, "c37", "default", "restart-drifty")
	cm.Data["v"] = "edited while no daemon ran"
	if _, err := clientset(t, "c37").CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	counter := newWriteCounter()
	restarted := newHarnessWith(t, f, nil, func(o *apply.Options) { o.Client.WrapTransport = counter.wrap })
	res, err := restarted.d.RunOnce(ctx)
	if err != nil {
		t.Fatalf("restart: %v %+v", err, res.Snapshot)
	}
	testenv.WaitFor(t, 20*time.Second, "the drift made while no daemon ran to be corrected", func() bool {
		return configMap(t, "c37", "default", "restart-drifty")["v"] == "desired"
	})
	n, paths := counter.total()
	if n != 1 {
		t.Errorf("the restarted daemon sent %d write requests, want only the drift correction: %v", n, paths)
	}
	if p := pairs(res, "c37")["app"]; p.State != status.StateApplied || p.Health == "" {
		t.Errorf("restored pair: %+v", p)
	}
	if p := pairs(res, "c37")["once"]; p.Revision != rev1 || p.Revision == rev2 {
		t.Errorf("the OneTime pair reports revision %s; the cluster holds %s's render", status.ShortRevision(p.Revision), status.ShortRevision(rev1))
	}
}

// TestRestartKeepsWhatItKnew: a daemon restarted while the branch head is
// broken enforces the revision in force before (an out-of-band change is
// corrected), wipes no status record, and keeps the last classifier
// labels of a cluster it cannot reach, marked stale.
func TestRestartKeepsWhatItKnew(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	files := baseFleet(t, "known")
	files["profiles/drifty.yaml"] = profileYAML("drifty", "env: prod", "  syncMode: ContinuousWithDriftDetection\n  addons:\n  - name: cm\n    manifests: {path: drifty}\n")
	files["drifty/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: known-drifty, namespace: default}\ndata: {v: \"desired\"}\n"
	good := f.Commit("fleet", files)
	first := newHarness(t, f, nil)
	if res, err := first.d.RunOnce(ctx); err != nil {
		t.Fatalf("first rollout: %v %+v", err, res.Snapshot)
	}
	first.d.Close()
	f.Commit("broken", map[string]string{"profiles/app.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: app}\nspec: {bogus: 1}\n"})
	cm := configMapObj(t, "c37", "default", "known-drifty")
	cm.Data["v"] = "edited while no daemon ran"
	if _, err := clientset(t, "c37").CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Cluster("c36").Stop()
	defer func() {
		if err := env.Cluster("c36").Start(context.Background(), "v1.36.3"); err != nil {
			t.Fatal(err)
		}
	}()

	restarted := newHarness(t, f, nil)
	res, err := restarted.d.RunOnce(ctx)
	if err == nil || res.Converged {
		t.Fatalf("a broken head converged: %v", err)
	}
	if res.Snapshot.Fleet.AppliedRevision != good {
		t.Errorf("revision in force after the restart = %s, want %s", status.ShortRevision(res.Snapshot.Fleet.AppliedRevision), status.ShortRevision(good))
	}
	testenv.WaitFor(t, 20*time.Second, "the revision in force to be enforced", func() bool {
		return configMap(t, "c37", "default", "known-drifty")["v"] == "desired"
	})
	for _, c := range []string{"c36", "c37"} {
		if f.statusOf(c) == "" {
			t.Errorf("status/clusters/%s.yaml was wiped", c)
		}
	}
	c36 := ""
	for _, c := range res.Snapshot.Clusters {
		if c.Cluster == "c36" {
			c36 = c.Labels["kubernetes"]
			if !c.ClassifierLabelsStale || c.Reachable {
				t.Errorf("c36 while unreachable after a restart: %+v", c)
			}
		}
	}
	if c36 != "v1-36" {
		t.Errorf("c36 lost its classifier labels after the restart: kubernetes=%q", c36)
	}
}

// TestUnaffectedClusterIsNotContacted: a commit that changes a profile of
// one cluster costs the other cluster no request at all; its record moves
// to the new revision.
func TestUnaffectedClusterIsNotContacted(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	files := map[string]string{
		"profiles/prod-app.yaml":    profileYAML("prod-app", "env: prod", "  addons:\n  - name: cm\n    manifests: {path: prod-app}\n"),
		"prod-app/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: untouched-prod, namespace: default}\ndata: {v: \"1\"}\n",
		"profiles/staging-app.yaml": profileYAML("staging-app", "env: staging", "  addons:\n  - name: cm\n    manifests: {path: staging-app}\n"),
		"staging-app/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: untouched-staging, namespace: default}\n",
	}
	for name, labels := range map[string]string{"c36": "env: staging", "c37": "env: prod"} {
		for k, v := range clusterFiles(t, name, labels) {
			files[k] = v
		}
	}
	f.Commit("fleet", files)
	counter := newWriteCounter()
	h := newHarnessWith(t, f, func(o *DaemonOptions) { o.StatusBranch = "" },
		func(o *apply.Options) { o.Client.WrapTransport = counter.wrap })
	if _, err := h.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	before := counter.requests("c36")
	rev2 := f.Commit("prod-app v2", map[string]string{"prod-app/cm.yaml": strings.Replace(files["prod-app/cm.yaml"], `"1"`, `"2"`, 1)})
	res, err := h.d.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if configMap(t, "c37", "default", "untouched-prod")["v"] != "2" {
		t.Error("the affected cluster did not get the change")
	}
	if n := counter.requests("c36") - before; n != 0 {
		t.Errorf("the unaffected cluster got %d requests", n)
	}
	for _, c := range res.Snapshot.Clusters {
		if c.Cluster == "c36" && (c.SourceRevision != rev2 || pairs(res, "c36")["staging-app"].State != status.StateApplied) {
			t.Errorf("the unaffected cluster's record: %+v", c)
		}
	}
}
