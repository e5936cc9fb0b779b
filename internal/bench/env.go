package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// Clusters is a set of fresh kube-apiservers and the fleet clusters that
// point at them.
type Clusters struct {
	Env   *testenv.Env
	Fleet []FleetCluster
	// Kubeconfigs are files, by cluster name, for kubectl.
	Kubeconfigs map[string]string
}

// StartClusters starts n fresh kube-apiservers from bins and writes their
// admin kubeconfigs under dir.
func StartClusters(ctx context.Context, bins *Binaries, n int, dir string, apiserverFlags ...string) (*Clusters, error) {
	return startClusters(ctx, bins, n, dir, nil, apiserverFlags)
}

// StartControllerClusters starts n fresh v1.37 clusters with controllers
// and kwok nodes (testenv.Controllers' defaults: 3 nodes) and writes their
// admin kubeconfigs under dir; bins must hold the control plane
// (Binaries.StageControlPlane).
func StartControllerClusters(ctx context.Context, bins *Binaries, n int, dir string) (*Clusters, error) {
	return startClusters(ctx, bins, n, dir, &testenv.Controllers{}, nil)
}

func startClusters(ctx context.Context, bins *Binaries, n int, dir string, ctrl *testenv.Controllers, apiserverFlags []string) (*Clusters, error) {
	fleet := NewClusters(n)
	opts := testenv.Options{BinDir: bins.Dir, EtcdBinary: bins.Etcd, APIServerFlags: apiserverFlags}
	for _, c := range fleet {
		opts.Clusters = append(opts.Clusters, testenv.ClusterOptions{Name: c.Name, Controllers: ctrl})
	}
	env, err := testenv.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	cs := &Clusters{Env: env, Fleet: fleet, Kubeconfigs: map[string]string{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		env.Stop()
		return nil, err
	}
	for i := range cs.Fleet {
		c := &cs.Fleet[i]
		c.Kubeconfig = env.Cluster(c.Name).Kubeconfig()
		p := filepath.Join(dir, c.Name+".kubeconfig")
		if err := os.WriteFile(p, c.Kubeconfig, 0o600); err != nil {
			env.Stop()
			return nil, err
		}
		cs.Kubeconfigs[c.Name] = p
	}
	return cs, nil
}

// Stop stops every API server and etcd.
func (cs *Clusters) Stop() { cs.Env.Stop() }

// Cluster returns the API server of a fleet cluster.
func (cs *Clusters) Cluster(name string) *testenv.Cluster {
	c := cs.Env.Cluster(name)
	if c == nil {
		panic(fmt.Sprintf("bench: no cluster %s", name))
	}
	return c
}
