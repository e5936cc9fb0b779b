package render

import (
	"errors"

	"github.com/regatta-dev/regatta/spec"
)

// ErrTenantNoKeys fails a SOPS file of a tenant whose declaration lists no
// keys (or none the cluster allows): the platform's keys are not the
// tenant's.
var ErrTenantNoKeys = errors.New("SOPS-encrypted, but the tenant's declaration lists no key the cluster allows (spec.decryption of tenant.yaml)")

// decryptionKeys are the keys that may decrypt the request's files: the
// cluster's for a platform profile; for a tenant's profile the tenant's,
// narrowed to the cluster's when it restricts them.
func decryptionKeys(req Request) *spec.Decryption {
	t := req.Profile.Tenant()
	if t == nil {
		return req.Cluster.Decryption
	}
	return t.Spec.Decryption.Intersect(req.Cluster.Decryption)
}

// tenantDenied reports whether the add-on may decrypt nothing: a tenant's
// profile left without keys (an empty list would allow every key).
func (a *addonRender) tenantDenied() bool {
	return a.profile.Tenant() != nil && a.decryption.IsEmpty()
}
