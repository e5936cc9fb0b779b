package notify

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestConfigMapLedgerOneSenderOfTwo: two notifiers (two replicas, or a
// replica and the one taking the fleet over) on one ledger ConfigMap of a
// real API server decide the same message at the same moment: exactly one
// sends it; a third, started later, sends nothing; the resolution is sent
// once too.
func TestConfigMapLedgerOneSenderOfTwo(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}}})
	cs, err := kubernetes.NewForConfig(env.Cluster("mgmt").RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ledger := func() Ledger {
		return &ConfigMapLedger{Client: cs, Namespace: "default", Name: "regatta-notifications"}
	}
	rev := strings.Repeat("12", 20)
	c, b := &clock{t: time.Unix(1e9, 0)}, &inbox{}
	a1, a2 := newTestNotifier(ledger(), c, b, alert("ops")), newTestNotifier(ledger(), c, b, alert("ops"))
	ctx := context.Background()
	step := func(ns []*Notifier, failed int) {
		var wg sync.WaitGroup
		for _, n := range ns {
			wg.Go(func() { n.Step(ctx, fleet(50, failed, rev)) })
		}
		wg.Wait()
	}
	step([]*Notifier{a1, a2}, 5)
	c.advance(time.Minute)
	for range 3 {
		step([]*Notifier{a1, a2}, 5)
	}
	if got := b.take(); len(got) != 1 || got[0].Count != 5 {
		t.Fatalf("two notifiers on one ledger sent %d messages, want 1: %+v", len(got), got)
	}
	later := newTestNotifier(ledger(), c, b, alert("ops"))
	step([]*Notifier{later}, 5)
	c.advance(time.Minute)
	step([]*Notifier{later}, 5)
	if got := b.take(); len(got) != 0 {
		t.Fatalf("a notifier started later sent %d messages the ledger had: %+v", len(got), got)
	}
	step([]*Notifier{a1, a2, later}, 0)
	c.advance(time.Minute)
	step([]*Notifier{a1, a2, later}, 0)
	if got := b.take(); len(got) != 1 || !got[0].Resolved {
		t.Fatalf("the fix gave %d messages, want one resolution: %+v", len(got), got)
	}
}
