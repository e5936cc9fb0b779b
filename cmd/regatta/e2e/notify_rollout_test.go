package e2e

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// canaryRollout is the spec.rollout of a profile: the canary c0 first,
// then production.
const canaryRollout = `  rollout:
    stages:
    - name: canary
      clusterSelector: {matchLabels: {stage: canary}}
    - name: production
      clusterSelector: {matchLabels: {stage: prod}}
`

// TestNotifyHaltedCanaryOneMessageWithTheRevert: a change that fails on
// the canary halts the rollout with production untouched, and the alert
// on RolloutHalted sends exactly one message naming the profile, the
// stage, the failing cluster and the revert of the change, to a webhook
// and as a Kubernetes Event in the management cluster.
func TestNotifyHaltedCanaryOneMessageWithTheRevert(t *testing.T) {
	e := startNotifyEnv(t, "c0", "c1", "c2")
	files := notifyClusters(map[string]string{"c0": ", stage: canary", "c1": ", stage: prod", "c2": ", stage: prod"})
	maps.Copy(files, cmProfile("web", "notify-web", "v1", canaryRollout))
	maps.Copy(files, alertFile("RolloutHalted", "{name: chat, type: webhook, secretRef: {name: ops-hook}}\n  - {name: events, type: kubernetesEvent}"))
	e.repo.commit(t, "web v1", files)
	startRegatta(t, "regatta-halt", logDirOr(e.dir), e.args(t, "--leader-elect=false")...)
	testenv.WaitFor(t, 60*time.Second, "web v1 on the three clusters", func() bool {
		return e.configMap(t, "c0", "notify-web", "web") == "v1" && e.configMap(t, "c1", "notify-web", "web") == "v1" && e.configMap(t, "c2", "notify-web", "web") == "v1"
	})

	// v2 writes into a namespace no cluster has: it fails on the canary.
	bad := e.repo.commit(t, "web v2 (broken)", cmProfile("web", "missing", "v2", canaryRollout))
	start := time.Now()
	testenv.WaitFor(t, 60*time.Second, "the message of the halt", func() bool { return len(e.inbox.messages()) > 0 })
	t.Logf("the halt's message arrived %s after the broken commit", time.Since(start).Round(100*time.Millisecond))
	testenv.HoldsFor(t, 5*time.Second, "one message, production untouched", func() bool {
		return len(e.inbox.messages()) == 1 && e.configMap(t, "c1", "notify-web", "web") == "v1" && e.configMap(t, "c2", "notify-web", "web") == "v1"
	})
	m := e.inbox.messages()[0]
	text, _ := m["text"].(string)
	t.Logf("message: %s", text)
	clusters, _ := m["clusters"].([]any)
	if m["kind"] != "RolloutHalted" || m["profile"] != "web" || m["stage"] != "canary" || m["revision"] != bad || m["resolved"] != false ||
		m["count"] != 1.0 || len(clusters) != 1 || clusters[0] != "c0" || !strings.Contains(text, "clusters: c0") ||
		!strings.Contains(text, "halted at stage canary") || !strings.Contains(text, "- halted: c0 failed") ||
		strings.Contains(text, "c1 failed") || !strings.Contains(text, "git revert "+bad) {
		t.Fatalf("message = %v, want the halt of web at stage canary naming c0 (not c1, c2) and git revert %s", m, bad)
	}
	// The same message as a Warning Event in regatta's namespace of the
	// management cluster.
	var events []corev1.Event
	testenv.WaitFor(t, 20*time.Second, "the halt's Event in regatta-system", func() bool {
		list, err := e.mgmt.CoreV1().Events("regatta-system").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		events = nil
		for _, ev := range list.Items {
			if ev.Source.Component == "regatta" {
				events = append(events, ev)
			}
		}
		return len(events) > 0
	})
	if ev := events[0]; len(events) != 1 || ev.Type != corev1.EventTypeWarning || ev.Reason != "RolloutHalted" ||
		!strings.Contains(ev.Message, "halted at stage canary") || !strings.Contains(ev.Message, "git revert "+bad) {
		t.Fatalf("Events recorded by regatta: %+v, want one Warning RolloutHalted with the revert", events)
	}
}
