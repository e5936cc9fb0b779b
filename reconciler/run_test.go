package reconciler

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/webhook"
)

func waitPass(t *testing.T, passes <-chan PassResult, rev string, within time.Duration) PassResult {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case res := <-passes:
			if rev == "" || res.Snapshot.Fleet.SourceRevision == rev {
				return res
			}
		case <-deadline:
			t.Fatalf("no pass for revision %q within %s", rev, within)
		}
	}
}

func signedPush(t *testing.T, url, secret string, valid bool) int {
	t.Helper()
	body := `{"ref":"refs/heads/main"}`
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	sig := hex.EncodeToString(mac.Sum(nil))
	if !valid {
		sig = strings.Repeat("0", len(sig))
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("X-Hub-Signature-256", "sha256="+sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestRunWebhookAndShutdown runs the daemon loop: a signed webhook starts a
// pass at once (the poll interval is an hour), a bad signature does not,
// and cancelling the context (SIGTERM) mid-pass lets the pass finish within
// the grace period with its status committed.
func TestRunWebhookAndShutdown(t *testing.T) {
	f := newFleetRepo(t)
	files := map[string]string{
		"profiles/hooked.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: hooked}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: cm\n    manifests: {path: hooked}\n",
		"hooked/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hooked, namespace: default}\ndata: {v: \"1\"}\n",
	}
	for k, v := range clusterFiles(t, "c37", "env: prod") {
		files[k] = v
	}
	f.Commit("fleet", files)
	passes := make(chan PassResult, 10)
	h := newHarness(t, f, func(o *DaemonOptions) {
		o.Watch.Interval, o.Watch.DisableFSNotify = time.Hour, true
		o.ShutdownGrace = 3 * time.Second
		o.OnPass = func(r PassResult) { passes <- r }
	})
	srv := httptest.NewServer(&webhook.Handler{Secret: []byte("hook-secret"), Branch: "main", Trigger: func(string) { h.d.Trigger() }})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.d.Run(ctx) }()
	waitPass(t, passes, "", 30*time.Second)

	rev2 := f.Commit("v2", map[string]string{"hooked/cm.yaml": strings.Replace(files["hooked/cm.yaml"], `"1"`, `"2"`, 1)})
	if code := signedPush(t, srv.URL, "hook-secret", false); code != http.StatusUnauthorized {
		t.Errorf("bad signature: HTTP %d", code)
	}
	select {
	case res := <-passes:
		t.Fatalf("a bad signature started a pass for %s", res.Snapshot.Fleet.SourceRevision)
	case <-time.After(2 * time.Second):
	}
	if code := signedPush(t, srv.URL, "hook-secret", true); code != http.StatusAccepted {
		t.Fatalf("good signature: HTTP %d", code)
	}
	waitPass(t, passes, rev2, 15*time.Second)
	if got := configMap(t, "c37", "default", "hooked")["v"]; got != "2" {
		t.Errorf("hooked v = %q", got)
	}

	// A Deployment never becomes Ready here (no controllers): its health
	// wait keeps the pass in flight when the context is cancelled.
	rev3 := f.Commit("slow", map[string]string{"hooked/deploy.yaml": slowDeployment})
	h.d.Trigger()
	cs := clientset(t, "c37")
	testenv.WaitFor(t, 30*time.Second, "the slow Deployment applied (its health wait in flight)", func() bool {
		_, err := cs.AppsV1().Deployments("default").Get(context.Background(), "slow", metav1.GetOptions{})
		return err == nil
	})
	stopped := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
	if took := time.Since(stopped); took > 15*time.Second {
		t.Errorf("shutdown took %s with a 3s grace", took)
	}
	if st := f.Show("regatta/status", "status/fleet.yaml"); !strings.Contains(st, rev3) {
		t.Errorf("the interrupted pass left no status commit:\n%s", st)
	}
	if s := f.Show("regatta/status", "status/clusters/c37.yaml"); !strings.Contains(s, "sourceRevision: "+rev3) {
		t.Errorf("cluster status not written for the interrupted pass:\n%s", s)
	}
}

const slowDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: slow, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: slow}}
  template:
    metadata: {labels: {app: slow}}
    spec:
      containers: [{name: c, image: example.invalid/slow:1}]
`

// TestStatusOnFollowedBranchNoLoop commits status to the followed branch
// and checks regatta's own commits never start another pass.
func TestStatusOnFollowedBranchNoLoop(t *testing.T) {
	f := newFleetRepo(t)
	files := map[string]string{
		"profiles/loop.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: loop}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: cm\n    manifests: {path: loop}\n",
		"loop/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: loop, namespace: default}\n",
	}
	for k, v := range clusterFiles(t, "c37", "env: prod") {
		files[k] = v
	}
	f.Commit("fleet", files)
	var count atomic.Int32
	h := newHarness(t, f, func(o *DaemonOptions) {
		o.StatusBranch = "main"
		o.Watch.Interval, o.Watch.DisableFSNotify = 200*time.Millisecond, true
		o.OnPass = func(PassResult) { count.Add(1) }
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.d.Run(ctx) }()
	testenv.WaitFor(t, 30*time.Second, "the first pass and its status commit", func() bool {
		return count.Load() >= 1 && f.Commits("main") >= 2
	})
	// The negative: 10 polls of the branch (200 ms each) see regatta's own
	// status commit and start no pass.
	testenv.Consistently(t, 2*time.Second, func(context.Context) error {
		if n := count.Load(); n != 1 {
			return fmt.Errorf("%d passes: regatta's own status commits triggered passes", n)
		}
		return nil
	})
	cancel()
	<-done
	if n := count.Load(); n != 1 {
		t.Errorf("%d passes: regatta's own status commits triggered passes", n)
	}
	if got := f.Commits("main"); got != 2 {
		t.Errorf("main has %d commits, want the fleet commit and one status commit", got)
	}
	if !strings.Contains(f.Show("main", "status/clusters/c37.yaml"), "state: Applied") {
		t.Error("status/ not written on the followed branch")
	}
}
