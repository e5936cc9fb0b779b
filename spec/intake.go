package spec

import (
	"io/fs"
	"slices"
	"sort"
	"strings"
)

// Verdict is what the daemon does with a revision, and what regatta
// validate reports it would do: the one rule of docs/operations.md,
// "What keeps a revision out".
type Verdict struct {
	// KeptOut are the errors that keep the whole revision out: every load
	// error outside a tenant's folder. The last good revision stays in
	// force.
	KeptOut Diagnostics
	// Refused are, when the revision is admitted, the tenants whose folder
	// has load errors: the revision is taken without them, and each keeps
	// its last good profiles.
	Refused []*RefusedTenant
}

// Admitted reports whether the revision is taken.
func (v Verdict) Admitted() bool { return len(v.KeptOut) == 0 }

// RefusedTenant is a tenant whose folder (tenant.yaml or its profiles)
// did not load.
type RefusedTenant struct {
	// Name is the tenant's folder name.
	Name string
	// Errors are the folder's errors, at file, line and field.
	Errors Diagnostics
	// usernames are the identities the tenant's objects may have been
	// written as: its ServiceAccount as the broken declaration reads, as
	// the last good one read, and the default.
	usernames []string
}

// Writes reports whether objects written as username (an inventory's
// impersonated user) may be the tenant's.
func (t *RefusedTenant) Writes(username string) bool {
	return username != "" && slices.Contains(t.usernames, username)
}

// Admit loads a revision (Load) and applies the rule of what keeps it
// out: errors outside tenants' folders keep the whole revision out;
// errors in a tenant's folder refuse only that tenant, whose tenant and
// profiles are then left out of the repository (KeepRefused puts its last
// good ones back). The daemon's intake and regatta validate both call it.
func Admit(fsys fs.FS) (*Repository, Diagnostics, Verdict) {
	repo, diags := Load(fsys)
	var v Verdict
	byName := map[string]*RefusedTenant{}
	for i, d := range diags {
		if d.Severity != SeverityError {
			continue
		}
		t := repo.tenantFolders[tenantFolderOf(d.File)]
		if t == nil {
			v.KeptOut = append(v.KeptOut, d)
			continue
		}
		name := tenantFolderOf(d.File)
		diags[i].Tenant = name
		if byName[name] == nil {
			byName[name] = &RefusedTenant{Name: name, usernames: tenantUsernames(name, t)}
			v.Refused = append(v.Refused, byName[name])
		}
		byName[name].Errors = append(byName[name].Errors, diags[i])
	}
	sort.Slice(v.Refused, func(i, j int) bool { return v.Refused[i].Name < v.Refused[j].Name })
	if !v.Admitted() {
		v.Refused = nil // the revision is not taken at all
	}
	repo.Refused = v.Refused
	repo.dropRefused()
	return repo, diags, v
}

// tenantFolderOf returns <name> of a file tenants/<name>/..., or "".
func tenantFolderOf(file string) string {
	rest, ok := strings.CutPrefix(file, TenantsDir+"/")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	return name
}

// tenantUsernames are the identities a tenant's objects may carry: its
// ServiceAccount as declared (however broken the declaration) and the
// default one.
func tenantUsernames(name string, t *Tenant) []string {
	d := &Tenant{Metadata: ObjectMeta{Name: name}}
	defaultTenant(d)
	out := []string{d.Spec.ServiceAccount.Username()}
	declared := *t
	defaultTenant(&declared)
	if u := declared.Spec.ServiceAccount.Username(); u != out[0] {
		out = append(out, u)
	}
	return out
}

// RefusedTenant returns the refused tenant of that name, or nil.
func (r *Repository) RefusedTenant(name string) *RefusedTenant {
	for _, t := range r.Refused {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// dropRefused leaves the refused tenants and their profiles out.
func (r *Repository) dropRefused() {
	refused := func(t *Tenant) bool { return t != nil && r.RefusedTenant(tenantFolderOf(t.Source.File)) != nil }
	r.Tenants = slices.DeleteFunc(r.Tenants, refused)
	r.Profiles = slices.DeleteFunc(r.Profiles, func(p *Profile) bool { return refused(p.tenant) })
	r.Alerts = slices.DeleteFunc(r.Alerts, func(a *Alert) bool { return refused(a.tenant) })
}

// KeepRefused puts each refused tenant's last good declaration and
// profiles, as last (the revision in force before) has them, back into
// the repository: they stay in force, refused (the daemon applies and
// deletes nothing of them) until the tenant's folder loads again. A
// profile whose name the new revision gave to another is left out.
func (r *Repository) KeepRefused(last *Repository) {
	if last == nil {
		return
	}
	taken := map[string]bool{}
	for _, p := range r.Profiles {
		taken[p.Metadata.Name] = true
	}
	for _, rt := range r.Refused {
		for _, t := range last.Tenants {
			if tenantFolderOf(t.Source.File) != rt.Name {
				continue
			}
			r.Tenants = append(r.Tenants, t)
			if u := t.Spec.ServiceAccount.Username(); !slices.Contains(rt.usernames, u) {
				rt.usernames = append(rt.usernames, u)
			}
		}
		for _, p := range last.Profiles {
			if p.tenant != nil && tenantFolderOf(p.tenant.Source.File) == rt.Name && !taken[p.Metadata.Name] {
				r.Profiles = append(r.Profiles, p)
			}
		}
	}
	sortByName(r)
	sort.Slice(r.Tenants, func(i, j int) bool { return r.Tenants[i].Metadata.Name < r.Tenants[j].Metadata.Name })
}

// Refusal returns the refused tenant a profile belongs to, or nil.
func (r *Repository) Refusal(p *Profile) *RefusedTenant {
	if p.tenant == nil {
		return nil
	}
	return r.RefusedTenant(tenantFolderOf(p.tenant.Source.File))
}
