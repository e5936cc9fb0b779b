package reconciler

import (
	"context"
	"errors"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/reconciler/tenancy"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// guardTenant refuses a tenant profile's render when an object is outside
// the tenant's namespaces or kinds (as the cluster serves them: a
// validated repository is not trusted blindly), then prepares the
// tenant's ServiceAccount and RBAC, with regatta's identity, for the
// impersonated apply.
func (p *clusterPass) guardTenant(ctx context.Context, rev *revision, prof *spec.Profile, res *render.Result) error {
	t := prof.Tenant()
	if t == nil {
		return nil
	}
	cl := p.cl.Client()
	if !p.r.opts.skipTenantGuard {
		opts := tenancy.Options{FS: rev.tree, Scope: tenancy.ScopeOf(cl.Mapper)}
		if err := tenancy.Err(prof, res, opts); err != nil {
			return err
		}
	}
	return tenancy.EnsureIdentity(ctx, cl.Kube, cl.Mapper, t, tenancy.Namespaces(res))
}

// tenantError places a refusal at its first object's file and line.
func tenantError(prof *spec.Profile, err error) *status.Error {
	var te *tenancy.Error
	if errors.As(err, &te) {
		v := te.Violations[0]
		return &status.Error{File: v.File, Line: v.Line, Object: v.Object, Message: err.Error()}
	}
	return &status.Error{File: prof.Source.File, Message: err.Error()}
}
