package testenv

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Environment variables that the package reads.
const (
	// EnvBinDir names the folder with kube-apiserver-vX.Y.Z, kubectl and
	// optionally etcd. Default: <module root>/bin.
	EnvBinDir = "REGATTA_BIN_DIR"
	// EnvEtcd names the etcd binary. Default: <bin dir>/etcd, then PATH.
	EnvEtcd = "REGATTA_ETCD"
)

// DefaultVersion is the Kubernetes version of a cluster that names none:
// the newest v1.37 patch release found in the bin folder.
const DefaultVersion = "v1.37"

// Options configures Start.
type Options struct {
	// Clusters to start; names must be unique and non-empty.
	Clusters []ClusterOptions
	// BinDir holds the kube-apiserver-vX.Y.Z binaries. Default: $REGATTA_BIN_DIR,
	// else <module root>/bin.
	BinDir string
	// EtcdBinary is the etcd executable. Default: $REGATTA_ETCD, else
	// <BinDir>/etcd, else etcd on PATH.
	EtcdBinary string
	// EtcdPerCluster starts one etcd per cluster instead of one shared etcd
	// with a key prefix per cluster.
	EtcdPerCluster bool
	// TempDir is the parent of the environment's folder. Default: /dev/shm
	// when writable (etcd fsyncs are free there), else os.TempDir().
	TempDir string
	// ReadyTimeout bounds the wait for one process to become ready.
	// Default: 90s.
	ReadyTimeout time.Duration
	// APIServerFlags are appended to every kube-apiserver's command line.
	APIServerFlags []string
	// APIServerEnv is added to every kube-apiserver's environment, e.g.
	// "GOGC=50": measured here, it trims an idle API server from ~280 to
	// ~235 MiB RSS at the cost of more GC work under load.
	APIServerEnv []string
	// AuditLog makes every kube-apiserver log its writes (create,
	// update, patch, delete) at the Metadata level, with the user and user
	// agent, to Cluster.AuditLog; ReadAuditLog reads it.
	AuditLog bool
	// Logf, when set, receives progress messages (e.g. testing.T.Logf).
	Logf func(format string, args ...any)
}

// ClusterOptions configures one cluster.
type ClusterOptions struct {
	// Name identifies the cluster in the Env; also used in the kubeconfig.
	Name string
	// Version selects the kube-apiserver binary: "v1.36.3" exactly, or
	// "v1.36" for the newest v1.36 patch release available. Default:
	// DefaultVersion.
	Version string
	// APIServerFlags are appended to this cluster's kube-apiserver flags.
	APIServerFlags []string
	// Controllers, when set, makes the cluster behave like a real one:
	// kube-controller-manager, kube-scheduler and kwok run beside the API
	// server and kwok simulates its nodes. Nil keeps the cluster bare (and
	// as cheap as an API server alone): nothing becomes Ready by itself.
	Controllers *Controllers
	// TokenWebhook, when set, is the URL of a TokenReview webhook
	// (authentication.k8s.io/v1) that the API server asks about bearer
	// tokens its token file does not know: the way EKS, GKE and AKS accept
	// cloud identities. TokenWebhookCA is its CA (PEM) for an https URL.
	TokenWebhook   string
	TokenWebhookCA []byte
}

// Controllers configures the controllers and simulated nodes of a
// controller-backed cluster. Its zero value gives DefaultNodes nodes of the
// default capacity.
type Controllers struct {
	// Nodes is how many kwok nodes the cluster has. Default: DefaultNodes.
	Nodes int
	// NodeCPU, NodeMemory and NodePods are each node's capacity (and
	// allocatable); a Pod that requests more than any node has left stays
	// Pending, as the scheduler finds no node. Defaults: DefaultNodeCPU,
	// DefaultNodeMemory, DefaultNodePods.
	NodeCPU    string
	NodeMemory string
	NodePods   int
	// ControllerManagerFlags are appended to kube-controller-manager's flags.
	ControllerManagerFlags []string
}

// Defaults of Controllers.
const (
	DefaultNodes      = 3
	DefaultNodeCPU    = "4"
	DefaultNodeMemory = "8Gi"
	DefaultNodePods   = 110
)

func (c Controllers) withDefaults() Controllers {
	if c.Nodes == 0 {
		c.Nodes = DefaultNodes
	}
	if c.NodeCPU == "" {
		c.NodeCPU = DefaultNodeCPU
	}
	if c.NodeMemory == "" {
		c.NodeMemory = DefaultNodeMemory
	}
	if c.NodePods == 0 {
		c.NodePods = DefaultNodePods
	}
	return c
}

func (c Controllers) validate() error {
	if c.Nodes < 0 || c.NodePods < 0 {
		return fmt.Errorf("controllers: nodes (%d) and nodePods (%d) must not be negative", c.Nodes, c.NodePods)
	}
	for field, q := range map[string]string{"nodeCPU": c.NodeCPU, "nodeMemory": c.NodeMemory} {
		if _, err := resource.ParseQuantity(q); q != "" && err != nil {
			return fmt.Errorf("controllers: %s %q: %w", field, q, err)
		}
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 90 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

func (o Options) validate() error {
	if len(o.Clusters) == 0 {
		return fmt.Errorf("no clusters requested")
	}
	seen := map[string]bool{}
	for i, c := range o.Clusters {
		if !isDNSLabel(c.Name) {
			return fmt.Errorf("clusters[%d]: name %q is not a DNS label (lower-case letters, digits, '-')", i, c.Name)
		}
		if seen[c.Name] {
			return fmt.Errorf("clusters[%d]: duplicate name %q", i, c.Name)
		}
		seen[c.Name] = true
		if c.Controllers != nil {
			if err := c.Controllers.validate(); err != nil {
				return fmt.Errorf("clusters[%d] (%s): %w", i, c.Name, err)
			}
		}
	}
	return nil
}

// isDNSLabel reports whether s is a DNS label: a cluster name becomes a
// folder, an etcd key prefix and a kubeconfig context.
func isDNSLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}
