package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/regatta-dev/regatta/reconciler/kubeconfig"
)

// managementConfig reads the management cluster's REST config: a
// kubeconfig file, or the pod's service account for "in-cluster".
func managementConfig(path string) (*rest.Config, error) {
	switch path {
	case "":
		return nil, nil
	case "in-cluster":
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, usageError("--management-kubeconfig=in-cluster: %v", err)
		}
		return cfg, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError("--management-kubeconfig: %v", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(b)
	if err != nil {
		return nil, usageError("--management-kubeconfig %s: %v", path, err)
	}
	return cfg, nil
}

// managementSecrets reads kubeconfig Secrets from the management cluster.
func managementSecrets(cfg *rest.Config) (kubeconfig.SecretGetter, error) {
	if cfg == nil {
		return nil, nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, namespace, name string) (map[string]any, error) {
		s, err := cs.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
		if err != nil {
			return nil, err
		}
		obj["kind"], obj["apiVersion"] = "Secret", "v1"
		return obj, nil
	}, nil
}

// errLostLeadership ends the process so that its replacement takes over
// with fresh state.
var errLostLeadership = errors.New("lost the leader election Lease")

// lead runs fn while holding the leader Lease in the management cluster,
// or right away without one. With leader election, /readyz reports ready
// while standing by: a standby replica is healthy, and a rolling update
// must be able to replace the leader.
func (f *runFlags) lead(ctx context.Context, cfg *rest.Config, log *slog.Logger, ready func(), fn func(context.Context) error) error {
	if cfg == nil || !f.leaderElect {
		return fn(ctx)
	}
	ready()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	result := make(chan error, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		ReleaseOnCancel: true, Name: "regatta",
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				log.Info("leader election won; reconciling", "identity", lock.LockConfig.Identity)
				result <- fn(ctx)
				cancel()
			},
			OnStoppedLeading: func() { cancel() },
			OnNewLeader: func(identity string) {
				if identity != lock.LockConfig.Identity {
					log.Info("another replica leads; standing by", "leader", identity)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	le.Run(ctx)
	select {
	case err := <-result:
		return err
	default:
	}
	if ctx.Err() != nil && context.Cause(ctx) == context.Canceled {
		return nil
	}
	return errLostLeadership
}
