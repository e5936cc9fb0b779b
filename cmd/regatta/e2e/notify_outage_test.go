package e2e

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestNotifyDestinationDownGetsTheMessageOnceAndDelaysNoApply: c2 is
// down, and so is the inbox when the alert on ClusterUnreachable is due:
// it answers 503 to four attempts of the dispatcher's backoff (at about
// 0, 2, 6 and 14 s) while a second commit's change reaches c0 and c1.
// Once the inbox is back, the next attempt (about 30 s after the first)
// brings the message, once.
//
// The happening is an unreachable cluster, whose subject is the same at
// every revision: a failing profile's subject is (profile, revision), so
// the second commit would make it a new subject with a message of its
// own.
func TestNotifyDestinationDownGetsTheMessageOnceAndDelaysNoApply(t *testing.T) {
	e := startNotifyEnv(t, "c0", "c1", "c2")
	e.env.Cluster("c2").Stop()
	e.inbox.set(true, nil)
	files := notifyClusters(map[string]string{"c0": "", "c1": "", "c2": ""})
	maps.Copy(files, cmProfile("app", "notify-app", "v1", ""))
	maps.Copy(files, alertFile("ClusterUnreachable", "{name: chat, type: webhook, secretRef: {name: ops-hook}}"))
	files["alerts/ops.yaml"] += "  unreachableFor: 1s\n"
	e.repo.commit(t, "app v1", files)
	p := startRegatta(t, "regatta-outage", logDirOr(e.dir), e.args(t, "--leader-elect=false")...)
	testenv.WaitFor(t, 60*time.Second, "the message's first attempt, refused", func() bool { return e.inbox.requestCount() > 0 })
	down := time.Now()

	e.repo.commit(t, "app v2", cmProfile("app", "notify-app", "v2", ""))
	committed := time.Now()
	testenv.WaitFor(t, 30*time.Second, "app v2 on c0 and c1 while the destination is down", func() bool {
		return e.configMap(t, "c0", "notify-app", "app") == "v2" && e.configMap(t, "c1", "notify-app", "app") == "v2"
	})
	applied := time.Since(committed)
	if n := e.inbox.requestCount(); len(e.inbox.messages()) != 0 {
		t.Fatalf("the inbox was down, yet kept %d messages (%d requests)", len(e.inbox.messages()), n)
	}
	testenv.WaitFor(t, 40*time.Second, "four refused attempts", func() bool { return e.inbox.requestCount() >= 4 })
	refused := e.inbox.requestCount()
	e.inbox.set(false, nil)
	up := time.Now()
	testenv.WaitFor(t, 60*time.Second, "the message once the inbox is back", func() bool { return len(e.inbox.messages()) > 0 })
	t.Logf("app v2 reached c0 and c1 %s after its commit, the destination down; the inbox refused %d attempts over %s, "+
		"and got the message %s after it came back (%s after the first attempt)", applied.Round(100*time.Millisecond), refused,
		up.Sub(down).Round(100*time.Millisecond), time.Since(up).Round(100*time.Millisecond), time.Since(down).Round(100*time.Millisecond))
	testenv.HoldsFor(t, 4*time.Second, "one message, one request after the refused ones", func() bool {
		return len(e.inbox.messages()) == 1 && e.inbox.requestCount() == refused+1
	})
	m := e.inbox.messages()[0]
	if m["kind"] != "ClusterUnreachable" || m["count"] != 1.0 || m["resolved"] != false || m["text"] == nil || !strings.Contains(m["text"].(string), "c2") {
		t.Fatalf("message = %v, want c2 unreachable", m)
	}
	if failed, sent := p.sample(t, `regatta_notifications_total{result="failed",type="webhook"}`), p.sample(t, `regatta_notifications_total{result="sent",type="webhook"}`); failed != float64(refused) || sent != 1 {
		t.Errorf("regatta_notifications_total: %v failed, %v sent; want %d and 1", failed, sent, refused)
	}
}
