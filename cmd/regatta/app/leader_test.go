package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestLeaderElection runs two replicas against a real management cluster:
// only one acts at a time, and the other takes over when it stops.
func TestLeaderElection(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}}})
	cfg := env.Cluster("mgmt").RESTConfig()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var active atomic.Int32
	var overlap atomic.Bool
	started := make(chan string, 2)
	replica := func(name string) (context.CancelFunc, chan error) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		f := &runFlags{leaderElect: true, leaderElectNamespace: "default", leaderIdentity: name}
		go func() {
			done <- f.lead(ctx, cfg, log, func() {}, func(ctx context.Context) error {
				if active.Add(1) > 1 {
					overlap.Store(true)
				}
				defer active.Add(-1)
				started <- name
				<-ctx.Done()
				return nil
			})
		}()
		return cancel, done
	}
	stopA, doneA := replica("a")
	first := waitLeader(t, started)
	stopB, doneB := replica("b")
	select {
	case second := <-started:
		t.Fatalf("%s started while %s leads", second, first)
	case <-time.After(5 * time.Second):
	}
	stopFirst, doneFirst := stopA, doneA
	if first == "b" {
		stopFirst, doneFirst = stopB, doneB
	}
	stopFirst()
	if err := <-doneFirst; err != nil {
		t.Errorf("stopped leader returned %v", err)
	}
	second := waitLeader(t, started)
	if second == first {
		t.Errorf("%s led twice", first)
	}
	stopA()
	stopB()
	if overlap.Load() {
		t.Error("two replicas acted at once")
	}
}

func waitLeader(t *testing.T, started <-chan string) string {
	t.Helper()
	select {
	case name := <-started:
		return name
	case <-time.After(30 * time.Second):
		t.Fatal("no replica became leader")
		return ""
	}
}

// TestLeaderShutdownKeepsTheLeaseUntilDone stops a leader as SIGTERM does:
// its work finishes its shutdown (grace period, final status commit) while
// it still holds the Lease, lead returns that work's result, and only then
// is the Lease released.
func TestLeaderShutdownKeepsTheLeaseUntilDone(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}}})
	cfg := env.Cluster("mgmt").RESTConfig()
	cs := kubernetes.NewForConfigOrDie(cfg)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	f := &runFlags{leaderElect: true, leaderElectNamespace: "default", leaderIdentity: "a",
		leaseTimings: leaseTimings{lease: 3 * time.Second, renew: 2 * time.Second, retry: 200 * time.Millisecond}}
	leading := make(chan struct{})
	holderDuringShutdown := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- f.lead(ctx, cfg, log, func() {}, func(fctx context.Context) error {
			close(leading)
			<-fctx.Done()
			// The shutdown outlasts a renewal: the Lease must still be
			// renewed by this replica, not released or lost.
			stopped := time.Now()
			holder := ""
			for range 100 {
				l, err := cs.CoordinationV1().Leases("default").Get(context.Background(), "regatta-leader", metav1.GetOptions{})
				if err != nil || l.Spec.HolderIdentity == nil || l.Spec.RenewTime == nil {
					break
				}
				if l.Spec.RenewTime.After(stopped) {
					holder = *l.Spec.HolderIdentity
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			holderDuringShutdown <- holder
			return nil
		})
	}()
	select {
	case <-leading:
	case <-time.After(30 * time.Second):
		t.Fatal("never became leader")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("lead after a clean shutdown returned %v, want nil", err)
	}
	if h := <-holderDuringShutdown; h != "a" {
		t.Errorf("during the shutdown the Lease was renewed by %q, want a", h)
	}
	if h := leaseHolder(t, cs); h != "" {
		t.Errorf("after the shutdown the Lease is held by %q, want released", h)
	}
}

// TestLeaderLosingTheLeaseFails takes the Lease from a leader: its work is
// stopped with errLostLeadership as the cause, and lead fails with it.
func TestLeaderLosingTheLeaseFails(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}}})
	cfg := env.Cluster("mgmt").RESTConfig()
	cs := kubernetes.NewForConfigOrDie(cfg)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &runFlags{leaderElect: true, leaderElectNamespace: "default", leaderIdentity: "a",
		leaseTimings: leaseTimings{lease: 3 * time.Second, renew: 2 * time.Second, retry: 200 * time.Millisecond}}
	leading := make(chan struct{})
	cause := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		done <- f.lead(context.Background(), cfg, log, func() {}, func(fctx context.Context) error {
			close(leading)
			<-fctx.Done()
			cause <- context.Cause(fctx)
			return nil
		})
	}()
	select {
	case <-leading:
	case <-time.After(30 * time.Second):
		t.Fatal("never became leader")
	}
	// Another holder takes the Lease for a minute: renewals fail.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := cs.CoordinationV1().Leases("default").Get(context.Background(), "regatta-leader", metav1.GetOptions{})
		if err != nil {
			return err
		}
		thief, secs, now := "thief", int32(60), metav1.NewMicroTime(time.Now())
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime, l.Spec.AcquireTime = &thief, &secs, &now, &now
		_, err = cs.CoordinationV1().Leases("default").Update(context.Background(), l, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, errLostLeadership) {
			t.Errorf("lead after losing the Lease returned %v, want %v", err, errLostLeadership)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("lead did not return after the Lease was taken")
	}
	select {
	case c := <-cause:
		if !errors.Is(c, errLostLeadership) {
			t.Errorf("the work was stopped with cause %v, want %v", c, errLostLeadership)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the work was not stopped after the Lease was taken")
	}
}

// leaseHolder reads the leader Lease's holder; empty when released.
func leaseHolder(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	l, err := cs.CoordinationV1().Leases("default").Get(context.Background(), "regatta-leader", metav1.GetOptions{})
	if err != nil {
		t.Errorf("read the Lease: %v", err)
		return "?"
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}
