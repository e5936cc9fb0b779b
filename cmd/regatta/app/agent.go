package app

import (
	"log/slog"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/agent"
	"github.com/regatta-dev/regatta/repo"
)

// agentFlags are the flags of `regatta run --cluster NAME`: the agent of
// one pulled cluster, running inside it.
type agentFlags struct {
	cluster           string
	kubeconfig        string
	fleetStatusBranch string

	config *rest.Config // the agent's own cluster, once resolved
}

func (a *agentFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&a.cluster, "cluster", "", "agent mode: reconcile only this cluster, which cluster.yaml must mark spec.mode: pull, from inside it (its ServiceAccount); status goes to the branch regatta-status/<cluster> only")
	fl.StringVar(&a.kubeconfig, "kubeconfig", "", "agent mode: kubeconfig of the agent's own cluster (default: the pod's in-cluster ServiceAccount)")
	fl.StringVar(&a.fleetStatusBranch, "fleet-status-branch", DefaultStatusBranch, "agent mode: the central daemon's status branch, read (never written) for the health of pushed clusters in rollouts")
}

// check resolves the agent's cluster config and refuses flags that make
// no sense for an agent.
func (a *agentFlags) check(f *runFlags, statusBranchSet bool) error {
	if a.cluster == "" {
		if a.kubeconfig != "" {
			return usageError("--kubeconfig is the agent's own cluster: it needs --cluster")
		}
		return nil
	}
	switch msgs := validation.IsDNS1123Label(a.cluster); {
	case len(msgs) > 0:
		return usageError("--cluster %q is not a cluster name: %s", a.cluster, msgs[0])
	case f.managementKubeconfig != "":
		return usageError("--cluster (agent mode) reads no kubeconfig Secrets: drop --management-kubeconfig")
	case f.shard.mode == replicasShard:
		return usageError("--cluster (agent mode) reconciles one cluster: it does not combine with --replicas-mode shard")
	case statusBranchSet && f.statusBranch != agent.StatusRef(a.cluster):
		return usageError("--cluster (agent mode) commits status to %s only: drop --status-branch", agent.StatusRef(a.cluster))
	}
	f.statusBranch = agent.StatusRef(a.cluster)
	var err error
	a.config, err = agentConfig(a.kubeconfig)
	return err
}

// agentConfig is the agent's own cluster: a kubeconfig file, else the
// pod's ServiceAccount.
func agentConfig(path string) (*rest.Config, error) {
	if path == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, usageError("--cluster (agent mode) runs inside its cluster: %v (or give --kubeconfig)", err)
		}
		return cfg, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError("--kubeconfig: %v", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(b)
	if err != nil {
		return nil, usageError("--kubeconfig %s: %v", path, err)
	}
	return cfg, nil
}

// pullOptions sets the daemon's pull-mode options: the agent's cluster,
// and, for every daemon, the reading of the other processes' records
// (which warns on log of an agent's ref holding other clusters' records).
func (a *agentFlags) pullOptions(o *reconciler.DaemonOptions, src *repo.Source, f *runFlags, log *slog.Logger) {
	refs := &agent.Refs{Source: src, Log: log}
	if a.config != nil {
		cfg := rest.CopyConfig(a.config)
		cfg.UserAgent = f.userAgent("regatta")
		o.Agent = &reconciler.AgentCluster{Name: a.cluster, Config: cfg}
		refs.StatusBranch = a.fleetStatusBranch
	}
	o.Peers = refs
}

// leaseConfig is where the leader election Lease lives: the management
// cluster, or an agent's own cluster (two agent pods never both act).
func (f *runFlags) leaseConfig() *rest.Config {
	if f.agent.config != nil {
		return f.agent.config
	}
	return f.mgmt
}
