package diff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/regatta-dev/regatta/spec"
)

// TenantChanges is what a comparison changes for one owner of profiles:
// a tenant, or the platform (Tenant empty).
type TenantChanges struct {
	Tenant string `json:"tenant"`
	// Owners are the tenant's spec.owners, who approve its changes.
	Owners   []string              `json:"owners,omitempty"`
	Profiles []TenantProfileChange `json:"profiles"`
	Counts   Counts                `json:"counts"`
}

// TenantProfileChange is one profile's change on some clusters.
type TenantProfileChange struct {
	Profile  string   `json:"profile"`
	Clusters []string `json:"clusters"`
	Counts   Counts   `json:"counts"`
}

// byTenant groups a report's profile changes by their owner, tenants by
// name after the platform; a profile is placed by the head revision (the
// base for a profile the head removed).
func byTenant(groups []Group, head, base *spec.Repository) []TenantChanges {
	idx := map[string]*TenantChanges{}
	profiles := map[string]map[string]*TenantProfileChange{}
	for _, g := range groups {
		for _, pc := range g.Profiles {
			owner, owners := ownerOf(pc.Profile, head, base)
			tc := idx[owner]
			if tc == nil {
				tc = &TenantChanges{Tenant: owner, Owners: owners}
				idx[owner], profiles[owner] = tc, map[string]*TenantProfileChange{}
			}
			p := profiles[owner][pc.Profile]
			if p == nil {
				p = &TenantProfileChange{Profile: pc.Profile}
				profiles[owner][pc.Profile] = p
			}
			p.Clusters = append(p.Clusters, g.Clusters...)
			for range g.Clusters {
				p.Counts.add(pc.Counts)
				tc.Counts.add(pc.Counts)
			}
		}
	}
	out := make([]TenantChanges, 0, len(idx))
	for owner, tc := range idx {
		for _, p := range profiles[owner] {
			sort.Strings(p.Clusters)
			tc.Profiles = append(tc.Profiles, *p)
		}
		sort.Slice(tc.Profiles, func(i, j int) bool { return tc.Profiles[i].Profile < tc.Profiles[j].Profile })
		out = append(out, *tc)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Tenant < out[j].Tenant // the platform ("") first
	})
	return out
}

func ownerOf(profile string, repos ...*spec.Repository) (string, []string) {
	for _, r := range repos {
		if r == nil {
			continue
		}
		if p := r.Profile(profile); p != nil {
			if t := p.Tenant(); t != nil {
				return t.Name(), t.Spec.Owners
			}
			return "", nil
		}
	}
	return "", nil
}

func ownerName(tenant string) string {
	if tenant == "" {
		return "platform"
	}
	return "tenant " + tenant
}

// writeTenantsMarkdown writes the changes by owner as a table, when a
// tenant has any.
func writeTenantsMarkdown(b *strings.Builder, ts []TenantChanges) {
	if !hasTenant(ts) {
		return
	}
	b.WriteString("\n#### Changes by tenant\n\n| owner | approvers | profile | clusters | changes |\n|---|---|---|---|---|\n")
	for _, t := range ts {
		for _, p := range t.Profiles {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", mdEscape(ownerName(t.Tenant)), mdEscape(strings.Join(t.Owners, " ")),
				mdEscape(p.Profile), mdEscape(strings.Join(p.Clusters, ", ")), countsShort(p.Counts))
		}
	}
}

// writeTenantsText writes the changes by owner, when a tenant has any.
func writeTenantsText(b *strings.Builder, ts []TenantChanges, c colors) {
	if !hasTenant(ts) {
		return
	}
	fmt.Fprintf(b, "\n%s\n", c.bold("Changes by tenant:"))
	for _, t := range ts {
		fmt.Fprintf(b, "  %s (%s)\n", ownerName(t.Tenant), countsShort(t.Counts))
		if len(t.Owners) > 0 {
			fmt.Fprintf(b, "    approvers: %s\n", strings.Join(t.Owners, " "))
		}
		for _, p := range t.Profiles {
			fmt.Fprintf(b, "    %s on %s: %s\n", p.Profile, strings.Join(p.Clusters, ", "), countsShort(p.Counts))
		}
	}
}

func hasTenant(ts []TenantChanges) bool {
	for _, t := range ts {
		if t.Tenant != "" {
			return true
		}
	}
	return false
}
