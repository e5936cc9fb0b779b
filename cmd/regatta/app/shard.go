package app

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/metrics"
	"github.com/regatta-dev/regatta/reconciler/shard"
)

// Replica modes of `regatta run` with a management cluster.
const (
	replicasStandby = "standby"
	replicasShard   = "shard"
)

// shardFlags are the flags of --replicas-mode shard.
type shardFlags struct {
	mode          string
	identity      string
	group         string
	leaseDuration time.Duration
}

func (s *shardFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&s.mode, "replicas-mode", replicasStandby, `with a management cluster, how replicas share the fleet: "standby" (one leader Lease, the others wait) or "shard" (each replica holds a membership Lease and owns an even share of the clusters, claimed on its Lease)`)
	fl.StringVar(&s.identity, "replica-identity", "", "with --replicas-mode shard, this replica's name in its group (a DNS subdomain; default: the host name, the pod name in a StatefulSet)")
	fl.StringVar(&s.group, "replica-group", "regatta", "with --replicas-mode shard, the group of replicas that share one fleet (names their membership Leases)")
	fl.DurationVar(&s.leaseDuration, "replica-lease-duration", shard.DefaultLeaseDuration, "with --replicas-mode shard, how long a membership Lease holds without renewal: a replica that dies is replaced within it plus a few seconds")
}

// check validates the replica mode against the other flags.
func (s *shardFlags) check(f *runFlags) error {
	switch s.mode {
	case replicasStandby:
		return nil
	case replicasShard:
	default:
		return usageError("--replicas-mode must be standby or shard, got %q", s.mode)
	}
	if f.managementKubeconfig == "" {
		return usageError("--replicas-mode shard needs --management-kubeconfig (the membership Leases live there)")
	}
	if f.once {
		return usageError("--replicas-mode shard does not combine with --once")
	}
	return nil
}

// ownership is the daemon's view of a shard Member, with the daemon
// filled in once built (the Member's OnChange needs it).
type ownership struct {
	*shard.Member
	d atomic.Pointer[reconciler.Daemon]
}

// member builds the shard Member of --replicas-mode shard; nil otherwise.
func (f *runFlags) member(m *metrics.Metrics, log *slog.Logger) (*ownership, error) {
	if f.shard.mode != replicasShard {
		return nil, nil
	}
	cs, err := kubernetes.NewForConfig(f.mgmt)
	if err != nil {
		return nil, err
	}
	id := f.shard.replicaID()
	o := &ownership{}
	o.Member, err = shard.New(shard.Options{
		Leases:        cs.CoordinationV1(),
		Namespace:     f.leaderElectNamespace,
		Group:         f.shard.group,
		Identity:      id,
		LeaseDuration: f.shard.leaseDuration,
		OnChange:      o.changed,
		Keys:          o.clusters,
		Metrics:       shard.NewMetrics(m.Registry),
		Log:           log.With("replica", id),
	})
	if err != nil {
		return nil, usageError("--replicas-mode shard: %v", err)
	}
	log.Info("sharding the fleet", "replica", id, "group", f.shard.group, "leaseDuration", f.shard.leaseDuration)
	return o, nil
}

func (o *ownership) changed() {
	if d := o.d.Load(); d != nil {
		d.OwnershipChanged()
	}
}

func (o *ownership) clusters() []string {
	if d := o.d.Load(); d != nil {
		return d.Clusters()
	}
	return nil
}

// runSharded runs the daemon while the Member renews its Lease; the Lease
// is released only after the daemon stopped touching clusters.
func (o *ownership) runSharded(ctx context.Context, d *reconciler.Daemon) error {
	o.d.Store(d)
	mctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); o.Member.Run(mctx) }()
	err := d.Run(ctx)
	stop()
	<-done
	return err
}

// replicaID is this replica's name in its group: --replica-identity, else
// the host name.
func (s *shardFlags) replicaID() string {
	if s.identity != "" {
		return s.identity
	}
	host, _ := os.Hostname()
	return strings.ToLower(host)
}

// userAgent is what regatta tells every API server, the workload clusters'
// and the management cluster's: base/<replica identity> for a shard
// replica, so that audit logs tell the replicas apart; base unsharded.
func (f *runFlags) userAgent(base string) string {
	if f.agent.cluster != "" {
		return base + "/agent-" + f.agent.cluster
	}
	if f.shard.mode != replicasShard {
		return base
	}
	return base + "/" + f.shard.replicaID()
}
