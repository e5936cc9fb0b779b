package reconciler

import (
	"slices"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// refusedTenants are the status records of a revision's refused tenants.
func refusedTenants(repo *spec.Repository) []status.RefusedTenant {
	var out []status.RefusedTenant
	for _, t := range repo.Refused {
		out = append(out, status.RefusedTenant{Tenant: t.Name, Errors: statusErrors(t.Errors)})
	}
	return out
}

func statusErrors(ds spec.Diagnostics) []status.Error {
	out := make([]status.Error, len(ds))
	for i, d := range ds {
		out[i] = status.Error{File: d.File, Line: d.Line, Message: fieldMessage(d)}
	}
	return out
}

func fieldMessage(d spec.Diagnostic) string {
	if d.Field == "" {
		return d.Message
	}
	return d.Field + ": " + d.Message
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

// dependenciesOf lists the profiles with spec.dependsOn, in name order.
func dependenciesOf(repo *spec.Repository) []status.ProfileDependency {
	var out []status.ProfileDependency
	for _, p := range repo.Profiles {
		if len(p.Spec.DependsOn) > 0 {
			out = append(out, status.ProfileDependency{Profile: p.Metadata.Name, DependsOn: slices.Clone(p.Spec.DependsOn)})
		}
	}
	return out
}
