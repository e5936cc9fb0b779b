package app

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

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
