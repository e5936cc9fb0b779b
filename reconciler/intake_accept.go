package reconciler

import (
	"io/fs"

	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// current returns the revision in force (nil: none yet).
func (r *Reconciler) current() *revision {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.good
}

// accept loads a revision; an admitted one becomes the revision in force
// (spec.Admit says which are: errors in a tenant's folder refuse only
// that tenant, whose last good profiles stay in force, refused). It
// returns the revision in force afterwards (nil: none yet). The errors of
// a revision kept out, and of refused tenants, go into fleet, with file
// and line; nothing is deleted or changed on their account.
func (r *Reconciler) accept(sha string, tree fs.FS, fleet *status.Fleet) *revision {
	if good := r.current(); good != nil && good.sha == sha {
		return good // loaded already
	}
	repo, diags, verdict := spec.Admit(tree)
	r.mu.Lock()
	defer r.mu.Unlock()
	if errs := verdict.KeptOut; len(errs) > 0 {
		fleet.Errors = append(fleet.Errors, statusErrors(errs)...)
		r.log.Error("revision is invalid; the last good revision stays in force",
			"revision", sha, "errors", len(errs), "first", errs[0].Error())
		return r.good
	}
	for _, w := range diags.Warnings() {
		r.log.Warn("repository warning", "revision", sha, "warning", w.Error())
	}
	if r.good != nil {
		repo.KeepRefused(r.good.repo)
	}
	for _, t := range verdict.Refused {
		r.log.Error("tenant folder does not load; the tenant's last good profiles stay in force, refused",
			"revision", sha, "tenant", t.Name, "errors", len(t.Errors), "first", t.Errors[0].Error())
	}
	r.good = &revision{sha: sha, tree: tree, repo: repo}
	return r.good
}

// seedKnown takes the last known facts of clusters from status records.
func (r *Reconciler) seedKnown(records []status.ClusterStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range records {
		if _, ok := r.known[c.Cluster]; ok {
			continue
		}
		k := knownCluster{version: c.KubernetesVersion, classified: map[string]plan.Classified{}}
		for name, labels := range c.ClassifierLabels {
			k.classified[name] = plan.Classified{Classifier: name, Labels: labels}
		}
		r.known[c.Cluster] = k
	}
}
