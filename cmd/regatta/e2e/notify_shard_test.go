package e2e

import (
	"maps"
	"syscall"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestNotifyTwoShardReplicasSendOnce: two replicas share four clusters
// (--replicas-mode shard); a profile failing on all four, on clusters of
// both replicas, is one message, sent by the replica that owns the fleet.
// SIGKILLed, it leaves the fleet to the other, which finds the message in
// the ledger and sends nothing again.
func TestNotifyTwoShardReplicasSendOnce(t *testing.T) {
	clusters := []string{"c0", "c1", "c2", "c3"}
	e := startNotifyEnv(t, clusters...)
	files := notifyClusters(map[string]string{"c0": "", "c1": "", "c2": "", "c3": ""})
	maps.Copy(files, cmProfile("web", "missing", "v1", "")) // fails everywhere: no namespace missing
	maps.Copy(files, alertFile("Failed", "{name: chat, type: webhook, secretRef: {name: ops-hook}}"))
	rev := e.repo.commit(t, "web broken", files)
	// A group wait of 5s: the fleet owner reads its peer's records from
	// the status branch (--status-interval 1s) before the message leaves.
	args := e.args(t, "--replicas-mode", "shard", "--replica-lease-duration", leaseDuration.String(),
		"--leader-elect-namespace", "default", "--notify-namespace", "regatta-system", "--notify-group-wait", "5s")
	procs := map[string]*process{}
	for _, id := range []string{"regatta-0", "regatta-1"} {
		procs[id] = startRegatta(t, id, logDirOr(e.dir), args...)
	}
	testenv.WaitFor(t, 60*time.Second, "the message", func() bool { return len(e.inbox.messages()) > 0 })
	var own map[string]string
	testenv.WaitFor(t, 20*time.Second, "the four records name their owners", func() bool {
		own = owners(e.repo.bare, rev, clusters)
		return len(own) == len(clusters)
	})
	if count(own, "regatta-0") == 0 || count(own, "regatta-1") == 0 {
		t.Fatalf("owners %v: the failing clusters are not shared by both replicas", own)
	}
	testenv.HoldsFor(t, 5*time.Second, "one message", func() bool { return len(e.inbox.messages()) == 1 })
	if m := e.inbox.messages()[0]; m["kind"] != "Failed" || m["count"] != 4.0 || m["revision"] != rev {
		t.Fatalf("message = %v, want web failing on the 4 clusters", m)
	}
	sender, survivor := "", ""
	for id, p := range procs {
		switch p.sample(t, `regatta_notifications_total{result="sent",type="webhook"}`) {
		case 1:
			sender = id
		case 0:
			survivor = id
		}
	}
	if sender == "" || survivor == "" {
		t.Fatalf("no single sender among the replicas (sender %q, other %q)", sender, survivor)
	}
	t.Logf("owners %v; %s sent the message", own, sender)

	procs[sender].kill(syscall.SIGKILL)
	killed := time.Now()
	testenv.WaitFor(t, 30*time.Second, "the survivor owning the fleet and finding the message in the ledger", func() bool {
		return procs[survivor].sample(t, `regatta_notification_checks_total{outcome="known"}`) > 0
	})
	t.Logf("%s found the message in the ledger %s after the SIGKILL of %s (lease %s)", survivor, time.Since(killed).Round(100*time.Millisecond), sender, leaseDuration)
	testenv.HoldsFor(t, 3*time.Second, "nothing sent again", func() bool {
		return len(e.inbox.messages()) == 1 && procs[survivor].sample(t, `regatta_notification_checks_total{outcome="new"}`) == 0
	})
}
