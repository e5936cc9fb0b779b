package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// errLostLeadership ends the process so that its replacement takes over
// with fresh state.
var errLostLeadership = errors.New("lost the leader election Lease")

// leaseTimings are the leader election's durations (client-go's
// LeaderElectionConfig). The zero value means the defaults.
type leaseTimings struct{ lease, renew, retry time.Duration }

func (t leaseTimings) orDefault() leaseTimings {
	if t.lease == 0 {
		return leaseTimings{lease: 15 * time.Second, renew: 10 * time.Second, retry: 2 * time.Second}
	}
	return t
}

// lead runs fn while holding the leader Lease in the management cluster,
// or right away without one. With leader election, /readyz reports ready
// while standing by: a standby replica is healthy, and a rolling update
// must be able to replace the leader.
//
// The Lease outlives fn: when ctx ends (SIGTERM), fn finishes its grace
// period and final status commit while the Lease is still renewed, and
// only then is the Lease released; lead returns fn's result. When the
// Lease is lost, fn's context ends at once and lead returns
// errLostLeadership.
func (f *runFlags) lead(ctx context.Context, cfg *rest.Config, log *slog.Logger, ready func(), fn func(context.Context) error) error {
	if cfg == nil || !f.leaderElect {
		return fn(ctx)
	}
	ready()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := leaseNamespace(ctx, cs, f.leaderElectNamespace, f.leaseCluster(), log); err != nil {
		return err
	}
	id := f.leaderIdentity
	if id == "" {
		host, _ := os.Hostname()
		id = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: "regatta-leader", Namespace: f.leaderElectNamespace},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	// The election's context ends only when fn has returned, or when a
	// standby replica is asked to stop.
	elect, release := context.WithCancel(context.WithoutCancel(ctx))
	defer release()
	l := &leadership{fn: fn, parent: ctx, release: release, result: make(chan error, 1), log: log, id: id}
	t := f.leaseTimings.orDefault()
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: t.lease, RenewDeadline: t.renew, RetryPeriod: t.retry,
		ReleaseOnCancel: true, Name: "regatta",
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: l.started,
			OnStoppedLeading: func() {},
			OnNewLeader: func(identity string) {
				if identity != id {
					log.Info("another replica leads; standing by", "leader", identity)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, l.stop)
	defer stop()
	le.Run(elect)
	return l.outcome()
}

// leadership is one replica's term as leader: fn runs under the Lease,
// and the Lease is released once fn has returned.
type leadership struct {
	fn      func(context.Context) error
	parent  context.Context    // the process's: ends on SIGTERM
	release context.CancelFunc // ends the election, releasing a held Lease
	result  chan error
	log     *slog.Logger
	id      string

	mu       sync.Mutex
	leading  bool // fn was started
	stopping bool // parent ended
}

// started runs fn for as long as the Lease is held (lctx) and the process
// is not shutting down (parent), then ends the election.
func (l *leadership) started(lctx context.Context) {
	l.mu.Lock()
	if l.stopping {
		l.mu.Unlock()
		return // stop has already ended the election
	}
	l.leading = true
	l.mu.Unlock()
	l.log.Info("leader election won; reconciling", "identity", l.id)
	fctx, cancel := context.WithCancelCause(l.parent)
	lost := context.AfterFunc(lctx, func() { cancel(errLostLeadership) })
	err := l.fn(fctx)
	if !lost() {
		// The Lease was lost while fn ran (or finished its shutdown):
		// another replica may act already.
		err = errLostLeadership
	}
	cancel(nil)
	l.result <- err
	l.release()
}

// stop ends a standby replica's election at once; a leader's ends when fn
// has finished its shutdown.
func (l *leadership) stop() {
	l.mu.Lock()
	l.stopping = true
	leading := l.leading
	l.mu.Unlock()
	if !leading {
		l.release()
	}
}

// outcome is what lead returns once the election has ended.
func (l *leadership) outcome() error {
	select {
	case err := <-l.result:
		return err
	default:
	}
	l.mu.Lock()
	leading := l.leading
	l.mu.Unlock()
	if leading || l.parent.Err() == nil {
		// The election ended while fn ran: the Lease was lost (renewal
		// failed), and fn is being stopped.
		return errLostLeadership
	}
	return nil // a standby replica asked to stop
}
