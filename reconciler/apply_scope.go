package reconciler

import (
	"github.com/regatta-dev/regatta/reconciler/tenancy"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// guardScope refuses a render for a namespace-scoped entry
// (spec.namespaces) when an object is cluster-scoped or in a namespace the
// entry does not list, as the cluster serves the kinds: nothing of the
// pair is applied or deleted.
func (p *clusterPass) guardScope(rev *revision, prof *spec.Profile, res *render.Result) error {
	if !p.spec.NamespaceScoped() {
		return nil
	}
	opts := tenancy.Options{FS: rev.tree, Scope: tenancy.ScopeOf(p.cl.Client().Mapper)}
	return tenancy.ErrCluster(p.spec, prof, res, opts)
}
