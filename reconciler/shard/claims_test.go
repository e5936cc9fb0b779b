package shard

import (
	"context"
	"github.com/regatta-dev/regatta/internal/testenv"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// intruder is a membership Lease the test writes itself, renewed every
// 200 ms, with the claims it is told to advertise.
type intruder struct {
	claims chan *claims // nil: no annotation at all
	stop   context.CancelFunc
	done   chan struct{}
}

func startIntruder(t *testing.T, id string, c *claims) *intruder {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Cluster("mgmt").RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	leases := cs.CoordinationV1().Leases("default")
	holder := id
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "regatta-" + id, Namespace: "default", Labels: map[string]string{GroupLabel: "regatta"}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}
	if c != nil {
		writeClaims(l, *c)
	}
	if l, err = leases.Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	in := &intruder{claims: make(chan *claims), stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(in.done)
		for {
			select {
			case <-ctx.Done():
				l.Spec.HolderIdentity = nil // released
				leases.Update(context.Background(), l, metav1.UpdateOptions{})
				return
			case c := <-in.claims:
				delete(l.Annotations, ClaimsAnnotation)
				if c != nil {
					writeClaims(l, *c)
				}
			case <-time.After(200 * time.Millisecond):
			}
			now := metav1.NewMicroTime(time.Now())
			l.Spec.RenewTime = &now
			if got, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err == nil {
				l = got
			}
		}
	}()
	t.Cleanup(func() { in.stop(); <-in.done })
	return in
}

// TestAnotherMembersClaimsFence: a member never owns a key that another
// live member's Lease claims, even when the assignment gives it that key
// (here: the other only drains it), nor anything while a live member's
// Lease carries no claims at all (a replica of an older release); it
// owns the key once the claim is gone.
func TestAnotherMembersClaimsFence(t *testing.T) {
	keys := []string{"k1", "k2", "k3", "k4"}
	in := startIntruder(t, "intruder", &claims{Draining: keys})
	r := startReplica(t, "default", "member", func() []string { return keys })
	testenv.WaitFor(t, 3*testLease, "the member sees the intruder and is active", func() bool {
		return isActive(r.m) && len(r.m.Members()) == 2
	})
	mine := 0
	for _, k := range keys {
		if r.m.OwnerOf(k) == "member" {
			mine++
		}
	}
	if mine == 0 {
		t.Fatal("the assignment gives the member none of the drained keys; the test needs some")
	}
	testenv.HoldsFor(t, testLease, "no drained key owned", func() bool { return isActive(r.m) && ownsNone(r.m, keys) })

	in.claims <- nil // no annotation: taken to claim everything
	testenv.HoldsFor(t, testLease, "nothing owned while a Lease has no claims", func() bool { return isActive(r.m) && ownsNone(r.m, keys) && !r.m.OwnsFleet() })

	in.claims <- &claims{}
	testenv.WaitFor(t, 2*testLease, "the member owns its keys once nobody claims them", func() bool {
		n := 0
		for _, k := range keys {
			if r.m.Owns(k) {
				n++
			}
		}
		return n == mine
	})
}

func isActive(m *Member) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active(time.Now())
}

// TestShortGapKeepsClaims: a member cut off for less than a lease
// duration stops working, keeps its claims (nobody can have expired it)
// and owns its keys again as soon as it renews, without a joining wait;
// it calls OnChange when it comes back, so the daemon asks again.
func TestShortGapKeepsClaims(t *testing.T) {
	keys := []string{"g1", "g2", "g3"}
	var changes atomic.Int32
	r := startReplicaWith(t, "default", "gap", func() []string { return keys }, func() { changes.Add(1) })
	owns := func() bool {
		for _, k := range keys {
			if !r.m.Owns(k) {
				return false
			}
		}
		return true
	}
	testenv.WaitFor(t, 3*testLease, "the member owns its keys", owns)
	r.link.cut.Store(true)
	cutAt := time.Now()
	testenv.WaitFor(t, testLease, "the cut member stops owning", func() bool { return ownsNone(r.m, keys) })
	before := changes.Load()
	r.link.cut.Store(false)
	back := testenv.WaitFor(t, testLease, "the member owns its keys again", owns)
	if gap := time.Since(cutAt); gap >= testLease {
		t.Fatalf("the gap lasted %s, not less than a lease: the test proves nothing", gap)
	}
	if back >= testLease/2 {
		t.Errorf("back after %s: it waited as if it had joined anew", back)
	}
	testenv.WaitFor(t, testLease, "an OnChange after coming back", func() bool { return changes.Load() > before })
}
