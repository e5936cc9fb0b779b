package reconciler

import (
	"context"
	"io/fs"
	"sort"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// PassResult is the outcome of one pass.
type PassResult struct {
	// Snapshot is the status to commit.
	Snapshot status.Snapshot
	// Converged is true when the revision asked for is in force and every
	// pair is Applied (or DryRun), with no cluster unreachable.
	Converged bool
	Duration  time.Duration
}

// Pass reconciles every cluster against revision sha, whose tree is tree.
// When the revision does not load or validate, nothing is deleted or
// changed on its account: the clusters are reconciled against the last
// good revision, and the status carries the errors with file and line.
func (r *Reconciler) Pass(ctx context.Context, sha string, tree fs.FS) PassResult {
	return r.pass(ctx, sha, tree, false)
}

// pass is Pass; with drift it also runs the full dry-run drift check of
// every drift-detected pair (the --drift-interval safety net).
func (r *Reconciler) pass(ctx context.Context, sha string, tree fs.FS, drift bool) PassResult {
	start := time.Now()
	fleet := status.Fleet{SourceRevision: sha}
	good := r.accept(sha, tree, &fleet)
	res := PassResult{Snapshot: status.Snapshot{Fleet: fleet}}
	if good != nil {
		res.Snapshot.Clusters = r.reconcileAll(ctx, good, drift)
		res.Snapshot.Fleet.AppliedRevision = good.sha
		r.opts.Metrics.SetRevision(good.sha)
	}
	res.Converged = len(fleet.Errors) == 0 && good != nil && converged(res.Snapshot.Clusters)
	res.Duration = time.Since(start)
	r.record(res)
	return res
}

// accept loads a revision; a valid one becomes the last good revision.
// It returns the revision to reconcile against (nil: none yet).
func (r *Reconciler) accept(sha string, tree fs.FS, fleet *status.Fleet) *revision {
	repo, diags := spec.Load(tree)
	r.mu.Lock()
	defer r.mu.Unlock()
	if errs := diags.Errors(); len(errs) > 0 {
		for _, d := range errs {
			fleet.Errors = append(fleet.Errors, status.Error{File: d.File, Line: d.Line, Message: fieldMessage(d)})
		}
		r.log.Error("revision is invalid; the last good revision stays in force",
			"revision", sha, "errors", len(errs), "first", errs[0].Error())
		return r.good
	}
	for _, w := range diags.Warnings() {
		r.log.Warn("repository warning", "revision", sha, "warning", w.Error())
	}
	r.good = &revision{sha: sha, tree: tree, repo: repo}
	return r.good
}

func fieldMessage(d spec.Diagnostic) string {
	if d.Field == "" {
		return d.Message
	}
	return d.Field + ": " + d.Message
}

// reconcileAll reconciles the clusters of a revision, Concurrency at a time.
func (r *Reconciler) reconcileAll(ctx context.Context, rev *revision, drift bool) []status.ClusterStatus {
	out := make([]status.ClusterStatus, len(rev.repo.Clusters))
	sem := make(chan struct{}, r.opts.Concurrency)
	var wg sync.WaitGroup
	for i, c := range rev.repo.Clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = r.reconcileCluster(ctx, rev, c, drift)
		}()
	}
	wg.Wait()
	r.forgetRemoved(rev.repo)
	return out
}

// forgetRemoved drops clients and state of clusters no longer in the
// repository. Their objects stay: without its kubeconfig a removed cluster
// cannot be reached.
func (r *Reconciler) forgetRemoved(repo *spec.Repository) {
	r.mu.Lock()
	var gone []string
	for name := range r.known {
		if repo.Cluster(name) == nil {
			gone = append(gone, name)
			delete(r.known, name)
		}
	}
	r.mu.Unlock()
	sort.Strings(gone)
	for _, name := range gone {
		r.log.Info("cluster left the repository; its objects are left in place", "cluster", name)
		r.opts.Apply.Forget(name)
	}
}

func converged(cs []status.ClusterStatus) bool {
	for _, c := range cs {
		if !c.Reachable && !c.Paused {
			return false
		}
		for _, p := range c.Profiles {
			switch p.State {
			case status.StateApplied, status.StateDryRun, status.StatePaused, status.StateWithdrawn:
			default:
				return false
			}
		}
	}
	return true
}
