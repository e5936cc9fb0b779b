package render

import (
	"errors"
	"slices"
)

// ErrTenantNoKeys fails a SOPS file of a tenant whose declaration lists no
// age recipients (or none the cluster allows): the platform's keys are not
// the tenant's.
var ErrTenantNoKeys = errors.New("SOPS-encrypted, but the tenant's declaration lists no age recipient the cluster allows (spec.decryption.ageRecipients of tenant.yaml)")

// decryptionRecipients are the age recipients whose keys may decrypt the
// request's files: the cluster's for a platform profile; for a tenant's
// profile the tenant's, narrowed to the cluster's when it restricts them.
func decryptionRecipients(req Request) []string {
	t := req.Profile.Tenant()
	if t == nil {
		return req.Cluster.AgeRecipients
	}
	own := t.AgeRecipients()
	if len(req.Cluster.AgeRecipients) == 0 {
		return own
	}
	var out []string
	for _, k := range own {
		if slices.Contains(req.Cluster.AgeRecipients, k) {
			out = append(out, k)
		}
	}
	return out
}

// tenantDenied reports whether the add-on may decrypt nothing: a tenant's
// profile left without recipients (an empty list would allow every key).
func (a *addonRender) tenantDenied() bool {
	return a.profile.Tenant() != nil && len(a.recipients) == 0
}
