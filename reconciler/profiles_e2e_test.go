package reconciler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// markReady reports a Deployment's replicas available, as its controllers
// would (none run in the test clusters).
func markReady(t *testing.T, cluster, ns, name string) {
	t.Helper()
	deps := clientset(t, cluster).AppsV1().Deployments(ns)
	d, err := deps.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: "True", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: "True", Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now}}}
	if _, err := deps.UpdateStatus(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deployment(ns, name string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name + ", namespace: " + ns + "}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: " + name + "}}\n  template:\n    metadata: {labels: {app: " + name + "}}\n    spec:\n      containers: [{name: c, image: example.invalid/x:1}]\n"
}

func profileYAML(name, selector, body string) string {
	return "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n  clusterSelector: {matchLabels: {" + selector + "}}\n" + body
}

func pairs(res PassResult, cluster string) map[string]status.Profile {
	out := map[string]status.Profile{}
	for _, c := range res.Snapshot.Clusters {
		if c.Cluster == cluster {
			for _, p := range c.Profiles {
				out[p.Name] = p
			}
		}
	}
	return out
}

// TestDependsOnHealthAndRenderFailure: a dependent profile is not applied
// while its dependency's Deployment is not Ready, nor while a Lua health
// check says Progressing; past its health timeout the dependency is Failed
// and its dependents keep waiting; once healthy, both go on; a render
// failure in a later revision deletes nothing and reports its file and
// line.
func TestDependsOnHealthAndRenderFailure(t *testing.T) {
	ctx := context.Background()
	gateHealth := `  healthTimeout: 2s
  healthChecks:
  - kind: ConfigMap
    script: |
      hs = {status = "Progressing", message = "not open"}
      if obj.data ~= nil and obj.data.open == "true" then hs.status = "Healthy"; hs.message = "open" end
      return hs
`
	files := map[string]string{
		"profiles/db.yaml":         profileYAML("db", "env: prod", "  healthTimeout: 3s\n  addons:\n  - name: db\n    manifests: {path: db}\n"),
		"db/deploy.yaml":           deployment("default", "deps-db"),
		"profiles/api.yaml":        profileYAML("api", "env: prod", "  dependsOn: [db]\n  addons:\n  - name: api\n    manifests: {path: api}\n"),
		"api/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deps-api, namespace: default}\n",
		"profiles/gate.yaml":       profileYAML("gate", "env: prod", gateHealth+"  addons:\n  - name: gate\n    manifests: {path: gate}\n"),
		"gate/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deps-gate, namespace: default}\ndata: {open: \"false\"}\n",
		"profiles/after-gate.yaml": profileYAML("after-gate", "env: prod", "  dependsOn: [gate]\n  addons:\n  - name: after\n    manifests: {path: after}\n"),
		"after/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deps-after-gate, namespace: default}\n",
		"profiles/tmpl.yaml":       profileYAML("tmpl", "env: prod", "  addons:\n  - name: tmpl\n    template: true\n    manifests: {path: tmpl}\n"),
		"tmpl/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deps-tmpl, namespace: default}\ndata:\n  greeting: \"{{ .Cluster.Values.greeting }}\"\n",
	}
	f, h := oneClusterFleet(t, files)
	res, _ := h.d.RunOnce(ctx)
	got := pairs(res, "c37")
	if got["db"].State != status.StateFailed || got["api"].State != status.StateWaitingForDependency ||
		got["gate"].State != status.StateFailed || got["after-gate"].State != status.StateWaitingForDependency ||
		got["tmpl"].State != status.StateApplied {
		t.Fatalf("first pass states: %+v", got)
	}
	if !strings.Contains(got["api"].Message, "waiting for db (Failed)") {
		t.Errorf("api message = %q", got["api"].Message)
	}
	if e := got["db"].Error; e == nil || !strings.Contains(e.Message, "not healthy within 3s") {
		t.Errorf("db error after its health timeout: %+v", e)
	}
	if configMap(t, "c37", "default", "deps-api") != nil || configMap(t, "c37", "default", "deps-after-gate") != nil {
		t.Fatal("a dependent was applied before its dependency was healthy")
	}

	markReady(t, "c37", "default", "deps-db")
	f.Commit("open the gate, break the template", map[string]string{
		"gate/cm.yaml": strings.Replace(files["gate/cm.yaml"], `"false"`, `"true"`, 1),
		"tmpl/cm.yaml": strings.Replace(files["tmpl/cm.yaml"], "greeting }}", "greeting }}{{ .Cluster.Values.missing }}", 1),
	})
	res, _ = h.d.RunOnce(ctx)
	got = pairs(res, "c37")
	for _, name := range []string{"db", "api", "gate", "after-gate"} {
		if got[name].State != status.StateApplied {
			t.Errorf("%s: %s %+v", name, got[name].State, got[name].Error)
		}
	}
	tm := got["tmpl"]
	if tm.State != status.StateFailed || tm.Error == nil || tm.Error.File != "tmpl/cm.yaml" || !strings.Contains(tm.Error.Message, "missing") {
		t.Errorf("tmpl after a render failure: %+v %+v", tm, tm.Error)
	}
	if configMap(t, "c37", "default", "deps-tmpl")["greeting"] != "hello-c37" {
		t.Error("a render failure changed or deleted the pair's objects")
	}
}

// TestPausedClusterIsLeftAlone: nothing is applied to a paused cluster.
func TestPausedClusterIsLeftAlone(t *testing.T) {
	f := newFleetRepo(t)
	files := map[string]string{
		"profiles/paused.yaml": profileYAML("paused-profile", "env: prod", "  addons:\n  - name: cm\n    manifests: {path: paused}\n"),
		"paused/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: paused-cm, namespace: default}\n",
	}
	for k, v := range clusterFiles(t, "c37", "env: prod") {
		files[k] = strings.Replace(v, "spec:\n", "spec:\n  paused: true\n", 1)
	}
	files["profiles/paused-profile.yaml"] = files["profiles/paused.yaml"]
	delete(files, "profiles/paused.yaml")
	f.Commit("fleet", files)
	h := newHarness(t, f, func(o *DaemonOptions) { o.StatusBranch = "" })
	res, err := h.d.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p := pairs(res, "c37")["paused-profile"]; p.State != status.StatePaused {
		t.Errorf("state %q", p.State)
	}
	if configMap(t, "c37", "default", "paused-cm") != nil {
		t.Error("applied to a paused cluster")
	}
}

// TestClusterStoppedMidPass: of three clusters, one stops while its pass
// waits for health; the other two converge, the stopped one reports its
// failure, and it converges once it is back.
func TestClusterStoppedMidPass(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	files := map[string]string{
		"profiles/quick.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: quick}\nspec:\n  clusterSelector:\n    matchExpressions: [{key: env, operator: Exists}]\n  addons:\n  - name: cm\n    manifests: {path: quick}\n",
		"quick/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: quick, namespace: default}\n",
		"profiles/slow.yaml":  profileYAML("slow", "env: slow", "  healthTimeout: 20s\n  addons:\n  - name: slow\n    manifests: {path: slow}\n"),
		"slow/deploy.yaml":    deployment("default", "slow-mid-pass"),
	}
	for name, labels := range map[string]string{"c35": "env: slow", "c36": "env: prod", "c37": "env: prod"} {
		for k, v := range clusterFiles(t, name, labels) {
			files[k] = v
		}
	}
	f.Commit("fleet", files)
	h := newHarness(t, f, func(o *DaemonOptions) { o.StatusBranch = "" })
	done := make(chan PassResult, 1)
	go func() { res, _ := h.d.RunOnce(ctx); done <- res }()
	testenv.WaitFor(t, 30*time.Second, "the slow Deployment applied on c35 (its pass then waits for health)", func() bool {
		_, err := clientset(t, "c35").AppsV1().Deployments("default").Get(ctx, "slow-mid-pass", metav1.GetOptions{})
		return err == nil
	})
	c35 := env.Cluster("c35")
	c35.Stop()
	var res PassResult
	select {
	case res = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the pass did not end after a cluster stopped")
	}
	if res.Converged {
		t.Error("converged with a stopped cluster")
	}
	for _, c := range []string{"c36", "c37"} {
		if p := pairs(res, c)["quick"]; p.State != status.StateApplied {
			t.Errorf("%s quick: %s", c, p.State)
		}
	}
	if p := pairs(res, "c35")["slow"]; p.State == status.StateApplied {
		t.Errorf("c35 slow: %s", p.State)
	}
	if err := c35.Start(ctx, "v1.35.4"); err != nil {
		t.Fatal(err)
	}
	// The Deployment may not have been created before the stop: let a
	// pass create it, and mark it ready while the pass waits for it. One
	// created before the stop is past its health timeout by now: it is
	// marked ready first (an unchanged add-on is Failed at once while
	// unhealthy).
	deps := clientset(t, "c35").AppsV1().Deployments("default")
	if _, err := deps.Get(ctx, "slow-mid-pass", metav1.GetOptions{}); err == nil {
		markReady(t, "c35", "default", "slow-mid-pass")
	}
	after := make(chan error, 1)
	go func() {
		res, err := h.d.RunOnce(ctx)
		if err != nil {
			err = fmt.Errorf("%w: %+v", err, pairs(res, "c35"))
		}
		after <- err
	}()
	testenv.WaitFor(t, 30*time.Second, "the Deployment on c35", func() bool {
		_, err := deps.Get(ctx, "slow-mid-pass", metav1.GetOptions{})
		return err == nil
	})
	markReady(t, "c35", "default", "slow-mid-pass")
	if err := <-after; err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

// TestRenamedProfileKeepsItsObjects: renaming a profile hands its objects
// to the new name without deleting and re-creating them.
func TestRenamedProfileKeepsItsObjects(t *testing.T) {
	ctx := context.Background()
	body := "  addons:\n  - name: cm\n    manifests: {path: renamed}\n"
	files := map[string]string{
		"profiles/old-name.yaml": profileYAML("old-name", "env: prod", body),
		"renamed/cm.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: renamed, namespace: default}\ndata: {v: \"1\"}\n",
	}
	f, h := oneClusterFleet(t, files)
	if _, err := h.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	before := configMapObj(t, "c37", "default", "renamed")
	f.Commit("rename", map[string]string{"profiles/old-name.yaml": "", "profiles/new-name.yaml": profileYAML("new-name", "env: prod", body)})
	res, err := h.d.RunOnce(ctx)
	if err != nil {
		t.Fatalf("%v: %+v", err, pairs(res, "c37"))
	}
	after := configMapObj(t, "c37", "default", "renamed")
	if after.UID != before.UID {
		t.Error("the renamed profile's object was deleted and re-created")
	}
	if after.Labels["regatta.dev/profile"] != "new-name" {
		t.Errorf("owner label = %q", after.Labels["regatta.dev/profile"])
	}
	if got := pairs(res, "c37"); got["old-name"].State != status.StateWithdrawn || got["new-name"].State != status.StateApplied {
		t.Errorf("states: %+v", got)
	}
}

// TestDriftCorrectedWithinSeconds: with ContinuousWithDriftDetection, an
// object edited or deleted out of band is restored without a new pass, and
// the next pass reports the corrections.
func TestDriftCorrectedWithinSeconds(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{
		"profiles/drifty.yaml": profileYAML("drifty", "env: prod", "  syncMode: ContinuousWithDriftDetection\n  addons:\n  - name: cm\n    manifests: {path: drifty}\n"),
		"drifty/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: drifty, namespace: default}\ndata: {v: \"desired\"}\n",
	}
	_, h := oneClusterFleet(t, files)
	if _, err := h.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	cms := clientset(t, "c37").CoreV1().ConfigMaps("default")
	cm := configMapObj(t, "c37", "default", "drifty")
	cm.Data["v"] = "edited by hand"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the edit to be reverted", func() bool {
		return configMap(t, "c37", "default", "drifty")["v"] == "desired"
	})
	if err := cms.Delete(ctx, "drifty", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the deleted object to come back", func() bool {
		return configMap(t, "c37", "default", "drifty") != nil
	})
	res, err := h.d.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := pairs(res, "c37")["drifty"].DriftCorrections; n < 2 {
		t.Errorf("driftCorrections = %d, want 2", n)
	}
}
