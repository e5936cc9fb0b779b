package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// crashingPodCheck is Sveltos' crashing-pod HealthCheck example as an
// alert's health check: Pods whose container waits in CrashLoopBackOff
// are Degraded.
const crashingPodCheck = `apiVersion: regatta.dev/v1alpha1
kind: Alert
metadata: {name: pods}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  healthChecks:
  - name: crashing-pod
    resourceSelectors:
    - {version: v1, kind: Pod, namespace: hc-e2e}
    script: |
      function evaluate()
        local hs = {resources = {}}
        for _, pod in ipairs(resources) do
          for _, cs in ipairs((pod.status or {}).containerStatuses or {}) do
            local waiting = cs.state and cs.state.waiting
            if waiting and waiting.reason == "CrashLoopBackOff" then
              table.insert(hs.resources, {resource = pod, status = "Degraded",
                message = cs.name .. ": " .. (waiting.message or "")})
            end
          end
        end
        return hs
      end
  notifications:
  - {name: chat, type: webhook, secretRef: {name: ops-hook}}
`

// TestHealthCheckDegradedMessageAndResolution: a real daemon runs an
// alert's Lua health check on three real API servers; a Pod in
// CrashLoopBackOff on c0 and on c2 (its status written by hand: the
// check only reads status) gives one message naming the check, both
// clusters and the Pods with their messages, the cluster records say so,
// and the Pods running again give one resolution at a later pass (each
// --drift-interval re-runs the checks).
func TestHealthCheckDegradedMessageAndResolution(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}, {Name: "c0"}, {Name: "c1"}, {Name: "c2"}}})
	ctx := context.Background()
	mgmt, err := kubernetes.NewForConfig(env.Cluster("mgmt").RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]kubernetes.Interface{}
	for _, c := range []string{"c0", "c1", "c2"} {
		kubeconfigSecret(t, mgmt, env.Cluster(c))
		if clients[c], err = kubernetes.NewForConfig(env.Cluster(c).RESTConfig()); err != nil {
			t.Fatal(err)
		}
		if _, err := clients[c].CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hc-e2e"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// a bare API server has no controller to make the default ServiceAccount Pods need
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "hc-e2e"}}
		if _, err := clients[c].CoreV1().ServiceAccounts("hc-e2e").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		podWaiting(t, clients[c], "web", "")
	}
	podWaiting(t, clients["c0"], "crash", "CrashLoopBackOff")
	podWaiting(t, clients["c2"], "crash", "CrashLoopBackOff")
	inbox := newHookInbox(t)
	hook := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ops-hook", Namespace: "regatta-system"},
		Data: map[string][]byte{"address": []byte(inbox.URL + "/hook")}}
	if _, err := mgmt.CoreV1().Secrets("regatta-system").Create(ctx, hook, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"alerts/pods.yaml": crashingPodCheck}
	for _, c := range []string{"c0", "c1", "c2"} {
		for k, v := range clusterFile(c) {
			files[k] = v
		}
	}
	repo := newRepo(t)
	repo.commit(t, "alert on crashing pods", files)
	dir := t.TempDir()
	startRegatta(t, "regatta-healthcheck", logDirOr(dir), "--repo", repo.bare, "--management-kubeconfig", mgmtKubeconfig(t, dir, env.Cluster("mgmt")),
		"--leader-elect=false", "--interval", "500ms", "--drift-interval", "2s", "--status-interval", "1s", "--notify-group-wait", "4s", // both clusters in the first message
		"--allow-url-prefix", inbox.URL+"/")

	testenv.WaitFor(t, 90*time.Second, "the grouped message", func() bool { return len(inbox.messages()) > 0 })
	msgs := inbox.messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages for one degraded check, want 1: %v", len(msgs), msgs)
	}
	m := msgs[0]
	text, _ := m["text"].(string)
	for _, want := range []string{"health check crashing-pod of alert pods reports resources Degraded on 2 clusters",
		"clusters: c0, c2", "c0: 1 Degraded: Pod hc-e2e/crash (app: back-off 5m0s restarting failed container)", "c2: 1 Degraded: Pod hc-e2e/crash"} {
		if !strings.Contains(text, want) {
			t.Errorf("message lacks %q:\n%s", want, text)
		}
	}
	if m["kind"] != "HealthCheckDegraded" || m["count"] != 2.0 || m["profile"] != "crashing-pod" || m["resolved"] != false {
		t.Fatalf("message = %v", m)
	}
	testenv.WaitFor(t, 30*time.Second, "c0's record of the check", func() bool {
		out, _ := gitOut(repo.bare, "show", "regatta/status:status/clusters/c0.yaml")
		return strings.Contains(out, "check: crashing-pod") && strings.Contains(out, "degraded: 1") && strings.Contains(out, "object: Pod hc-e2e/crash")
	})

	podWaiting(t, clients["c0"], "crash", "")
	podWaiting(t, clients["c2"], "crash", "")
	testenv.WaitFor(t, 90*time.Second, "the resolution", func() bool { return len(inbox.messages()) > 1 })
	msgs = inbox.messages()
	if len(msgs) != 2 || msgs[1]["resolved"] != true || msgs[1]["count"] != 2.0 || msgs[1]["profile"] != "crashing-pod" {
		t.Fatalf("after the Pods recovered: %v, want the first message and one resolution", msgs)
	}
}

// podWaiting creates (or updates) a Pod whose one container is running,
// or waiting for reason; its status is written by hand, as the kubelet
// would.
func podWaiting(t *testing.T, c kubernetes.Interface, name, reason string) {
	t.Helper()
	ctx := context.Background()
	pods := c.CoreV1().Pods("hc-e2e")
	p, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		p = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "hc-e2e"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}}}
		if p, err = pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	if reason != "" {
		state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "back-off 5m0s restarting failed container"}}
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "example.com/app:1", ImageID: "", State: state}}
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
