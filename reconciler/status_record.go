package reconciler

import (
	"time"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// countApply counts a pair's writes: an apply that created, changed or
// deleted an object (a pass that only re-checked health, with every
// object unchanged, wrote nothing), and the objects it pruned or withdrew.
func (r *Reconciler) countApply(res apply.Result) {
	c := res.Counts
	if res.Skipped || res.State == apply.StateDryRun || c.Created+c.Configured+c.Deleted == 0 {
		return
	}
	m := r.opts.Metrics
	m.Applies.WithLabelValues(res.Cluster, res.Profile).Inc()
	if res.Counts.Deleted > 0 {
		m.Prunes.WithLabelValues(res.Cluster, res.Profile).Add(float64(res.Counts.Deleted))
	}
}

// recordCluster counts one cluster's reconciliation.
func (r *Reconciler) recordCluster(out clusterOutcome, took time.Duration) {
	m := r.opts.Metrics
	m.ClusterDuration.Observe(took.Seconds())
	result := "converged"
	switch {
	case out.retry:
		result = "failed"
	case !converged([]status.ClusterStatus{out.status}):
		result = "progressing"
	}
	m.Clusters.WithLabelValues(result).Inc()
	r.log.Info("cluster reconciled", "cluster", out.status.Cluster, "revision", status.ShortRevision(out.status.SourceRevision),
		"result", result, "duration", took.Round(time.Millisecond))
	for _, t := range status.Overlong(out.status) {
		r.log.Warn("status text longer than the status files hold; they keep its start, here it is in full",
			"cluster", out.status.Cluster, "field", t.Field, "bytes", len(*t.Text), "text", *t.Text)
	}
}

// record derives the settled fleet's metrics and log line from its result,
// so status, metrics and logs never disagree.
func (r *Reconciler) record(res PassResult) {
	m := r.opts.Metrics
	m.PassDuration.Observe(res.Duration.Seconds())
	outcome := "converged"
	switch {
	case len(res.Snapshot.Fleet.Errors) > 0:
		outcome = "invalid"
	case !res.Converged:
		outcome = "unconverged"
	}
	m.Passes.WithLabelValues(outcome).Inc()
	seen := map[string]map[string]struct{}{}
	for _, c := range res.Snapshot.Clusters {
		seen[c.Cluster] = map[string]struct{}{}
		for _, p := range c.Profiles {
			seen[c.Cluster][p.Name] = struct{}{}
			m.SetPairState(c.Cluster, p.Name, p.State, allStates)
		}
	}
	r.mu.Lock()
	for cluster, profiles := range r.lastPairs {
		for profile := range profiles {
			if _, ok := seen[cluster][profile]; !ok {
				m.ForgetPair(cluster, profile)
			}
		}
	}
	r.lastPairs = seen
	hits, misses := r.opts.Renderer.CacheStats()
	m.RenderCache.WithLabelValues("hit").Add(float64(hits - r.cacheHits))
	m.RenderCache.WithLabelValues("miss").Add(float64(misses - r.cacheMisses))
	r.cacheHits, r.cacheMisses = hits, misses
	r.mu.Unlock()
	r.log.Info("fleet settled", "revision", res.Snapshot.Fleet.SourceRevision,
		"applied", res.Snapshot.Fleet.AppliedRevision, "outcome", outcome,
		"clusters", len(res.Snapshot.Clusters), "duration", res.Duration.Round(1e6))
}

// clusterOutcome is the result of one cluster's reconciliation.
type clusterOutcome struct {
	status status.ClusterStatus
	// superseded: a newer revision came in force mid-way; the status is
	// partial and the cluster must be reconciled again at once.
	superseded bool
	// retry: reconcile again after a backoff.
	retry bool
}

// PassResult is the state of the fleet when it settled.
type PassResult struct {
	// Snapshot is the status of every cluster and of the fleet.
	Snapshot status.Snapshot
	// Converged is true when the newest revision is in force and every
	// pair is Applied (or DryRun, Paused, Withdrawn), with no cluster
	// unreachable.
	Converged bool
	// Duration is the time from the first work queued to the settling.
	Duration time.Duration
}
