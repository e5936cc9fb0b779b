package status

import (
	"path"
	"strings"
)

// TenantsDir holds one Markdown page per tenant.
const TenantsDir = "status/tenants"

// TenantFile is the status page of one tenant.
func TenantFile(name string) string { return path.Join(TenantsDir, name+".md") }

// TenantPages renders, for each tenant with pairs in the snapshot, the
// dashboard of its own profiles only: the clusters they reach, their
// states and errors. Pages are keyed by tenant name.
func TenantPages(s Snapshot) map[string][]byte {
	out := map[string][]byte{}
	for _, t := range tenantNames(s) {
		page := RenderDashboard(ForTenant(s, t))
		page = strings.Replace(page, "# Fleet status\n", "# Status of tenant "+t+"\n", 1)
		out[t] = []byte(page)
	}
	return out
}

// ForTenant is what a tenant may see of a snapshot: the clusters its
// profiles reach, with those profiles only, and of the fleet-wide status
// its own rollouts, dependencies and refusal (the rule of
// status/tenants/<name>.md, which the web UI follows too).
func ForTenant(s Snapshot, tenant string) Snapshot {
	cs := tenantClusters(s.Clusters, tenant)
	return Snapshot{Fleet: tenantFleet(s.Fleet, tenant, cs), Clusters: cs}
}

// Tenants are the tenants with pairs in the snapshot or refused, in the
// order met.
func Tenants(s Snapshot) []string { return tenantNames(s) }

// tenantNames are the tenants with pairs or refused, in the order met.
func tenantNames(s Snapshot) []string {
	seen := map[string]bool{}
	var out []string
	for _, rt := range s.Fleet.RefusedTenants {
		seen[rt.Tenant] = true
		out = append(out, rt.Tenant)
	}
	for _, c := range s.Clusters {
		for _, p := range c.Profiles {
			if p.Tenant != "" && !seen[p.Tenant] {
				seen[p.Tenant] = true
				out = append(out, p.Tenant)
			}
		}
	}
	return out
}

// tenantClusters keeps the clusters the tenant's profiles reach, with
// those profiles only; the cluster's error and facts are kept, its labels
// too (the tenant's selectors are written against them).
func tenantClusters(cs []ClusterStatus, tenant string) []ClusterStatus {
	var out []ClusterStatus
	for _, c := range cs {
		var ps []Profile
		for _, p := range c.Profiles {
			if p.Tenant == tenant {
				ps = append(ps, p)
			}
		}
		if len(ps) > 0 {
			c.Profiles = ps
			c.HealthChecks = tenantHealthChecks(c.HealthChecks, tenant)
			out = append(out, c)
		}
	}
	return out
}

// tenantFleet keeps of the fleet-wide status what concerns the tenant's
// profiles (those its clusters' records hold): their rollouts and
// dependencies, and its own refusal, nothing of the platform's or another
// tenant's.
func tenantFleet(f Fleet, tenant string, cs []ClusterStatus) Fleet {
	own := map[string]bool{}
	for _, c := range cs {
		for _, p := range c.Profiles {
			own[p.Name] = true
		}
	}
	rollouts, deps, refused := f.Rollouts, f.DependsOn, f.RefusedTenants
	f.Rollouts, f.DependsOn, f.RefusedTenants = nil, nil, nil
	for _, rt := range refused {
		if rt.Tenant == tenant {
			f.RefusedTenants = append(f.RefusedTenants, rt)
		}
	}
	for _, r := range rollouts {
		if own[r.Profile] {
			f.Rollouts = append(f.Rollouts, r)
		}
	}
	for _, d := range deps {
		if own[d.Profile] {
			f.DependsOn = append(f.DependsOn, d)
		}
	}
	return f
}

// tenantHealthChecks keeps the outcomes of the tenant's own alerts'
// health checks.
func tenantHealthChecks(hs []HealthCheck, tenant string) []HealthCheck {
	var out []HealthCheck
	for _, h := range hs {
		if h.Tenant == tenant {
			out = append(out, h)
		}
	}
	return out
}
