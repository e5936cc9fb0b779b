package e2e

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// notifyFleet is a profile web on three clusters whose add-on, at
// version broken, writes to a namespace that only c0 has.
func notifyFleet(broken bool) map[string]string {
	ns := "notify-e2e"
	if broken {
		ns = "only-c0"
	}
	files := map[string]string{
		"profiles/web.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: web}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: cm\n    manifests: {path: web}\n",
		"web/cm.yaml":       "apiVersion: v1\nkind: Namespace\nmetadata: {name: notify-e2e}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: " + ns + "}\ndata: {v: x}\n",
		"alerts/ops.yaml":   "apiVersion: regatta.dev/v1alpha1\nkind: Alert\nmetadata: {name: ops}\nspec:\n  on: [Failed]\n  notifications:\n  - {name: chat, type: webhook, secretRef: {name: ops-hook}}\n",
	}
	for _, c := range []string{"c0", "c1", "c2"} {
		for k, v := range clusterFile(c) {
			files[k] = v
		}
	}
	return files
}

// TestNotifyOneGroupedMessageAndItsResolution: a profile failing on 2 of
// 3 clusters is one message naming both and the revert; a restarted
// daemon sends it again to no one; the fix is one resolution.
func TestNotifyOneGroupedMessageAndItsResolution(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}, {Name: "c0"}, {Name: "c1"}, {Name: "c2"}}})
	ctx := context.Background()
	mgmt, err := kubernetes.NewForConfig(env.Cluster("mgmt").RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"c0", "c1", "c2"} {
		kubeconfigSecret(t, mgmt, env.Cluster(c))
	}
	c0, err := kubernetes.NewForConfig(env.Cluster("c0").RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c0.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "only-c0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	inbox := newHookInbox(t)
	hook := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ops-hook", Namespace: "regatta-system"},
		Data: map[string][]byte{"address": []byte(inbox.URL + "/hook")}}
	if _, err := mgmt.CoreV1().Secrets("regatta-system").Create(ctx, hook, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	repo := newRepo(t)
	bad := repo.commit(t, "web broken", notifyFleet(true))
	dir := t.TempDir()
	args := []string{"--repo", repo.bare, "--management-kubeconfig", mgmtKubeconfig(t, dir, env.Cluster("mgmt")), "--leader-elect=false",
		"--interval", "500ms", "--status-interval", "1s", "--health-timeout", "10s", "--notify-group-wait", "2s",
		"--allow-url-prefix", inbox.URL + "/"}
	logDir := logDirOr(dir)
	first := startRegatta(t, "regatta-notify", logDir, args...)
	testenv.WaitFor(t, 90*time.Second, "the grouped message", func() bool { return len(inbox.messages()) > 0 })
	msgs := inbox.messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages for one failing change, want 1: %v", len(msgs), msgs)
	}
	m := msgs[0]
	text, _ := m["text"].(string)
	if m["count"] != 2.0 || m["revision"] != bad || m["profile"] != "web" || m["resolved"] != false ||
		!strings.Contains(text, "c1") || !strings.Contains(text, "c2") || !strings.Contains(text, "git revert "+bad) {
		t.Fatalf("message = %v", m)
	}

	first.kill(syscall.SIGTERM)
	second := startRegatta(t, "regatta-notify-2", logDir, args...)
	testenv.WaitFor(t, 60*time.Second, "the restarted daemon finding the message in the ledger", func() bool {
		return second.sample(t, `regatta_notification_checks_total{outcome="known"}`) > 0
	})
	if n := second.sample(t, `regatta_notification_checks_total{outcome="new"}`); n != 0 || len(inbox.messages()) != 1 {
		t.Fatalf("the restarted daemon sent %v messages again: %v", n, inbox.messages())
	}
	repo.commit(t, "web fixed", notifyFleet(false))
	testenv.WaitFor(t, 90*time.Second, "the resolution", func() bool { return len(inbox.messages()) > 1 })
	msgs = inbox.messages()
	if len(msgs) != 2 || msgs[1]["resolved"] != true || msgs[1]["count"] != 2.0 {
		t.Fatalf("after the restart and the fix: %v, want the first message and one resolution", msgs)
	}
	cm, err := mgmt.CoreV1().ConfigMaps("regatta-system").Get(ctx, "regatta-notifications", metav1.GetOptions{})
	if err != nil || strings.Contains(cm.Data["ledger.json"], "Failed") {
		t.Fatalf("ledger after the resolution: %v %v", cm, err)
	}
}

// sample reads one sample of the process's metrics, written as
// name{labels}; 0 when absent.
func (p *process) sample(t *testing.T, series string) float64 {
	t.Helper()
	resp, err := http.Get(p.metrics)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}
