package reconciler

import (
	"context"

	"github.com/regatta-dev/regatta/reconciler/classify"
	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// reconcileCluster reconciles one cluster on a revision and returns its
// status. Nothing here is ever deleted unless the revision loaded, the
// cluster was reached and classified, and a profile no longer selects it.
// stop is asked between profiles: once it says a newer revision is in
// force, nothing more is applied or withdrawn.
func (r *Reconciler) reconcileCluster(ctx context.Context, rev *revision, c *spec.Cluster, drift bool, stop func() bool) clusterOutcome {
	p := &clusterPass{
		r:       r,
		rev:     rev,
		spec:    c,
		log:     r.log.With("cluster", c.Metadata.Name),
		st:      status.ClusterStatus{Cluster: c.Metadata.Name, SourceRevision: rev.sha},
		results: map[string]status.Profile{},
		stop:    stop,
	}
	p.reconcile(ctx, drift)
	if p.cl != nil {
		p.cl.EndPass()
	}
	return clusterOutcome{status: p.st, superseded: p.superseded, retry: p.retry}
}

func (p *clusterPass) reconcile(ctx context.Context, drift bool) {
	if p.spec.Spec.Paused {
		p.paused()
		return
	}
	labels, ok := p.connect(ctx)
	if !ok || !p.register(ctx) {
		return
	}
	a := plan.Match(p.rev.repo.Profiles, plan.Cluster{Name: p.spec.Metadata.Name, Labels: labels})
	gone := p.toWithdraw(ctx, a)
	if drift {
		p.driftCheck(ctx)
	}
	p.applyWaves(ctx, a, gone)
	if !p.stopped() {
		p.withdraw(ctx, gone)
	}
	p.st.Profiles = p.sortedResults()
	if !p.stopped() {
		p.healthChecks(ctx, labels) // after the applies, under its own deadline
	}
}

// driftCheck compares every drift-detected object with its desired state
// (server-side dry-run) and restores what drifted, beyond what the watches
// caught.
func (p *clusterPass) driftCheck(ctx context.Context) {
	events, err := p.cl.DriftCheck(ctx)
	if err != nil {
		p.log.Warn("drift check failed", "error", err)
	}
	if len(events) > 0 {
		p.log.Info("drift check corrected objects", "corrections", len(events))
	}
}

// connect reads the kubeconfig, reaches the cluster and classifies it. It
// returns the effective labels, or false when the cluster cannot be
// reconciled in this pass (its status then says why).
func (p *clusterPass) connect(ctx context.Context) (map[string]string, bool) {
	name := p.spec.Metadata.Name
	var err error
	if p.cl, err = p.r.clusterFor(ctx, p.rev.tree, p.spec); err != nil {
		p.unreachable(err)
		return nil, false
	}
	p.facts = newFactsClient(p.cl.Client(), p.spec)
	cctx, cancel := context.WithTimeout(ctx, p.r.opts.ClusterTimeout)
	defer cancel()
	version, err := p.facts.version(cctx)
	if err != nil {
		p.unreachable(err)
		return nil, false
	}
	p.st.Reachable, p.st.KubernetesVersion = true, version
	p.r.opts.Metrics.ClusterReachable.WithLabelValues(name).Set(1)
	res := classify.Classify(cctx, version, p.facts, luaEvaluator{p.r.opts.Lua}, p.rev.repo.Classifiers)
	return p.labels(version, res), true
}

// labels merges cluster.yaml labels with classifier labels. A classifier
// that could not be evaluated keeps its last known result, so a transient
// error never withdraws add-ons.
func (p *clusterPass) labels(version string, res classify.Result) map[string]string {
	name := p.spec.Metadata.Name
	p.r.mu.Lock()
	prev := p.r.known[name]
	next := knownCluster{version: version, classified: map[string]plan.Classified{}}
	for _, m := range res.Matched {
		next.classified[m.Classifier] = m
	}
	for _, err := range res.Errors {
		p.log.Warn("classifier failed; keeping its last result", "error", err)
		p.st.ClassifierErrors = append(p.st.ClassifierErrors, status.ClassifierError{Classifier: err.Classifier, Message: err.Err.Error()})
		if m, ok := prev.classified[err.Classifier]; ok {
			next.classified[err.Classifier] = m
		}
	}
	p.r.known[name] = next
	p.r.mu.Unlock()
	return p.effective(next, false)
}
