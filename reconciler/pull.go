package reconciler

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// Pull mode
//
// A cluster with spec.mode: pull is reconciled by an agent inside it: a
// Daemon with DaemonOptions.Agent, which owns that cluster only, reaches
// it with the given config (its ServiceAccount) and commits only its
// record. Every other daemon never builds a client for it (clusterFor
// refuses) and shows the record its agent committed (DaemonOptions.Peers).
// Rollouts read the pairs of the clusters a daemon does not reconcile
// from those records (rollouts.input).

// AgentCluster makes a Daemon the agent of one pulled cluster.
type AgentCluster struct {
	// Name is the cluster's name in the repository (clusters/<name>/).
	Name string
	// Config reaches the cluster: in a pod, rest.InClusterConfig.
	Config *rest.Config
}

// Peers reads what the repository shows of the clusters a daemon does not
// reconcile (reconciler/agent implements it over Git refs).
type Peers interface {
	// Records returns a record for each pulled cluster (from its agent's
	// status, that cluster's record only; one saying so when there is
	// none yet) and the records found of the pushed clusters.
	Records(ctx context.Context, pulled, pushed []string) ([]status.ClusterStatus, error)
	// Turns returns the handover turn the other side recorded of each
	// cluster (daemon_handover.go) and the revision it recorded it at: the
	// agents' when fromAgents, else the central daemon's; turn 0 when it
	// recorded none.
	Turns(ctx context.Context, fromAgents bool, clusters []string) (map[string]status.Handover, error)
}

// peerRecords are the records of the clusters other processes reconcile,
// by cluster.
type peerRecords map[string]status.ClusterStatus

// RefusedError is why an agent does not act for its cluster.
type RefusedError struct {
	Cluster  string
	Revision string
	Reason   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("agent of cluster %s refuses to act at revision %s: %s", e.Cluster, status.ShortRevision(e.Revision), e.Reason)
}

// handover is this daemon's side of the handshake that keeps the central
// daemon and a cluster's agent from both writing to the cluster across a
// switch of spec.mode (reconciler/agent/handover.go), by cluster.
type handover struct {
	mu       sync.Mutex
	own      map[string]int64  // the turns this daemon recorded
	at       map[string]string // the revision at which it took or handed each
	other    map[string]int64  // the other side's, as last read
	otherAt  map[string]string // the revision the other side recorded each at
	readAt   *revision         // the revision in force when other was last read
	inFlight map[string]int    // passes running, by cluster
	verified bool              // an agent's fresh claim (turn 1) was checked after its commit
	waiting  map[string]bool   // clusters whose turn this daemon waits for
}

func (h *handover) init() {
	if h.own == nil {
		h.own, h.at, h.other, h.otherAt = map[string]int64{}, map[string]string{}, map[string]int64{}, map[string]string{}
		h.inFlight, h.waiting = map[string]int{}, map[string]bool{}
	}
}

// isWaiting reports whether the daemon waits for the other side's release
// of the cluster.
func (h *handover) isWaiting(cluster string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting[cluster]
}
