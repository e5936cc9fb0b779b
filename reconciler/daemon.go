package reconciler

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/spec"
	"github.com/regatta-dev/regatta/verify"
)

// DaemonOptions configures the loop of `regatta run`.
type DaemonOptions struct {
	Source *repo.Source
	Watch  repo.WatchOptions
	// DriftInterval queues every cluster for a reconciliation on the
	// revision in force with classification and a full drift check of its
	// drift-detected pairs. Zero disables it.
	DriftInterval time.Duration
	// StatusBranch receives the status files; when it is the followed
	// branch they go to its status/ folder and regatta's own commits never
	// queue work. Empty disables status commits (and the restore of what
	// an earlier daemon knew).
	StatusBranch string
	StatusAuthor repo.Signature
	// StatusInterval spaces status commits: at most one per interval,
	// carrying every record that changed since the last (default 10s).
	StatusInterval time.Duration
	// ShutdownGrace is how long the clusters being reconciled may go on
	// after the context is cancelled (SIGTERM) before they are cancelled
	// too.
	ShutdownGrace time.Duration
	// Ownership, when set, shards the fleet among replicas: this daemon
	// reconciles, watches and records only the clusters it owns, and
	// writes the fleet-wide status only when it owns the fleet.
	Ownership Ownership
	// OnPass, when set, is called each time the fleet settles (nothing
	// queued, nothing being reconciled, no add-on waiting for health) after
	// work was done, with the status of that moment; RunOnce calls it
	// after its status commit.
	OnPass func(PassResult)
	// Agent, when set, makes this daemon the agent of one pulled cluster
	// (spec.mode: pull; reconciler/pull.go): it reconciles that cluster
	// only, with the given config, refuses a revision that does not mark
	// it pulled, and commits only its record to StatusBranch (its own
	// ref). Without it, pulled clusters are never reconciled.
	Agent *AgentCluster
	// Verify, when set, checks the signatures of each new revision
	// (package verify) before it may come in force: a refused revision is
	// kept out as an invalid one is (intake_verify.go).
	Verify Verifier
	// Peers, when set, reads the records of the clusters this daemon does
	// not reconcile: shown in its status, read by its rollouts' gates.
	Peers Peers
	// OnStatus, when set, is called with the fleet's status after each
	// status commit (notifications, commit statuses).
	OnStatus func(status.Snapshot)
	// StatusHistory, when set, is told of each status commit this daemon
	// pushed, with the branch (an agent's is its own ref), under the
	// status commit lock: reconciler/status/history folds the branch's
	// older history there (--status-history-keep).
	StatusHistory StatusHistory
}

// StatusHistory bounds a status branch's history; a fold that fails is
// logged and the status commit stands.
type StatusHistory interface {
	Committed(ctx context.Context, branch string) (repo.FoldResult, error)
}

// ErrUnconverged is returned by RunOnce when some pair did not converge.
var ErrUnconverged = errors.New("not every (profile, cluster) pair converged")

// Daemon follows the repository. Each cluster is reconciled on its own by
// one of Options.Concurrency workers, from a queue keyed by cluster: a new
// revision, the drift interval, a health change or a retry queues the
// clusters concerned, and no cluster waits for another. Status is
// committed every StatusInterval while records change.
type Daemon struct {
	r       *Reconciler
	opts    DaemonOptions
	watcher *repo.Watcher
	store   *statusStore
	// records decides status records unchanged since the last commit
	// without parsing them (writeRecord).
	records status.RecordMemo
	// encoder marshals only the cluster records that changed since the
	// last status commit (statusFiles).
	encoder status.RecordEncoder

	mu       sync.Mutex
	restored bool   // the status branch was read
	inForce  string // the revision in force by the status branch, at start
	// anchor is the in-force revision's own signature check at start
	// (intake_verify.go).
	anchor *verify.Verdict
	// inForceCheck is the signature check of the revision in force.
	inForceCheck *status.Verification
	// converged is the revision each cluster last converged on (see
	// unchanged).
	converged map[string]*revision
	// committed is the store version of the last status commit.
	committed uint64
	// statusTip is the status branch's tip the last fleet-wide status
	// showed all of: the fleet's owner writes it again when other
	// replicas moved the branch since (peersWrote).
	statusTip string
	commitMu  sync.Mutex
	// owner receives OwnershipChanged's signals.
	owner chan struct{}
	// peers are the records of the clusters other processes reconcile.
	peers peerRecords
	// hand is this daemon's side of the writer handshake of each cluster.
	hand handover
	// auth says whether this daemon may write a cluster now (authority.go).
	auth *authority
}

// Trigger asks for an immediate fetch (a push webhook); it never blocks.
func (d *Daemon) Trigger() { d.watcher.Trigger() }

// Speaker says whether this daemon reconciles the cluster or writes its
// record now, and under which name: what notifications and the UI show as
// the cluster's writer.
func (d *Daemon) Speaker(cluster string) Speaker { return d.auth.speaker(cluster) }

// Alerts are the alerts of the revision in force (alerts/), for the
// notifier.
func (d *Daemon) Alerts() []*spec.Alert {
	if rev := d.r.current(); rev != nil {
		return rev.repo.Alerts
	}
	return nil
}

// InForce is the revision in force, its tree and repository (nil before
// the first), for what reads its files off the daemon's path: the
// notifications' secretFile.
func (d *Daemon) InForce() (fs.FS, *spec.Repository) {
	if rev := d.r.current(); rev != nil {
		return rev.tree, rev.repo
	}
	return nil, nil
}

// Verifier decides whether a revision may come in force (verify.Verifier
// over the Source). The daemon asks it once per new revision, with the
// last verified revision as base (intake_verify.go).
type Verifier interface {
	Check(ctx context.Context, rev, base string) verify.Verdict
	Mode() verify.Mode
}
