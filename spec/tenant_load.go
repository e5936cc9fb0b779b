package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// loadTenants reads tenants/<name>/tenant.yaml and the tenant's profiles,
// tenants/<name>/profiles/*.yaml, which join the repository's profiles
// bound to their tenant.
func loadTenants(fsys fs.FS, repo *Repository, diags *Diagnostics) {
	repo.tenantFolders = map[string]*Tenant{}
	for _, f := range listTenantFiles(fsys, diags) {
		t := &Tenant{}
		repo.tenantFolders[tenantFolderOf(f)] = t
		if !loadDocument(fsys, f, KindTenant, t, &t.Source, diags) {
			continue
		}
		repo.Tenants = append(repo.Tenants, t)
		dir := path.Join(path.Dir(f), TenantProfilesDir)
		for _, pf := range listYAML(fsys, dir, diags) {
			p := &Profile{tenant: t}
			if loadDocument(fsys, pf, KindProfile, p, &p.Source, diags) {
				repo.Profiles = append(repo.Profiles, p)
			} else {
				repo.markUnloaded(KindProfile, p.Metadata.Name, pf)
			}
		}
	}
}

// listTenantFiles returns tenants/<name>/tenant.yaml for every folder of
// tenants/ that has one. Other files and folders are left alone: a
// tenants/ folder may hold other things (Flux's multi-tenancy layout); a
// folder with profiles/ but no tenant.yaml is a warning, since its
// profiles are not read.
func listTenantFiles(fsys fs.FS, diags *Diagnostics) []string {
	entries, err := fs.ReadDir(fsys, TenantsDir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			*diags = append(*diags, Diagnostic{File: TenantsDir, Message: err.Error()})
		}
		return nil
	}
	var out []string
	for _, e := range entries {
		p := path.Join(TenantsDir, e.Name())
		if !e.IsDir() {
			continue
		}
		f := path.Join(p, TenantFile)
		if _, err := fs.Stat(fsys, f); err == nil {
			out = append(out, f)
			continue
		}
		if _, err := fs.Stat(fsys, path.Join(p, TenantProfilesDir)); err == nil {
			*diags = append(*diags, Diagnostic{File: p, Severity: SeverityWarning,
				Message: "folder has " + TenantProfilesDir + "/ but no " + TenantFile + ": its profiles are not read"})
		}
	}
	return out
}

// DefaultTenantServiceAccountNamespace is where a tenant's ServiceAccount
// is created when its declaration names no namespace.
const DefaultTenantServiceAccountNamespace = "regatta-system"

func defaultTenant(t *Tenant) {
	sa := &t.Spec.ServiceAccount
	if sa.Name == "" {
		sa.Name = "tenant-" + t.Metadata.Name
	}
	if sa.Namespace == "" {
		sa.Namespace = DefaultTenantServiceAccountNamespace
	}
}

func validateTenant(r *Repository, t *Tenant, rep report) {
	dir := strings.TrimSuffix(t.Source.File, "/"+TenantFile)
	checkName(rep, t.Metadata.Name, dir[strings.LastIndexByte(dir, '/')+1:], "folder")
	checkLabels(rep, "metadata.labels", t.Metadata.Labels)
	checkTenantClusters(r, t, rep)
	checkTenantNamespaces(t.Spec.Namespaces, rep)
	checkTenantKinds(t.Spec.Kinds, rep)
	sa := t.Spec.ServiceAccount
	checkDNS(rep, "spec.serviceAccount.name", sa.Name, validation.IsDNS1123Subdomain)
	checkDNS(rep, "spec.serviceAccount.namespace", sa.Namespace, validation.IsDNS1123Label)
	checkDecryption(rep, "spec.decryption", t.Spec.Decryption)
	for i, o := range t.Spec.Owners {
		if o == "" || strings.ContainsAny(o, " \t\n#") {
			rep.errorf(fmt.Sprintf("spec.owners[%d]", i), "%q is not a CODEOWNERS owner (@user, @org/team or an e-mail address)", o)
		}
	}
}

func checkTenantClusters(r *Repository, t *Tenant, rep report) {
	c := t.Spec.Clusters
	checkSelector(rep, "spec.clusters.selector", c.Selector)
	if sel, err := c.Selector.Compile(); err == nil {
		t.selector = sel
	}
	if len(c.Names) == 0 && c.Selector.IsEmpty() {
		rep.errorf("spec.clusters", "required: names or a selector (a tenant without clusters reaches none)")
	}
	for i, n := range c.Names {
		if r.Cluster(n) == nil {
			rep.warnf(fmt.Sprintf("spec.clusters.names[%d]", i), "cluster %q does not exist", n)
		}
	}
}

func checkTenantNamespaces(nss []string, rep report) {
	if len(nss) == 0 {
		rep.errorf("spec.namespaces", "at least one namespace (name or glob such as team-a-*) is required")
	}
	for i, ns := range nss {
		field := fmt.Sprintf("spec.namespaces[%d]", i)
		if _, err := path.Match(ns, ""); err != nil || ns == "" {
			rep.errorf(field, "%q is not a namespace name or glob", ns)
			continue
		}
		if !IsNamespacePattern(ns) {
			checkDNS(rep, field, ns, validation.IsDNS1123Label)
		}
	}
}

// IsNamespacePattern reports whether a tenant namespace entry is a glob.
func IsNamespacePattern(ns string) bool { return strings.ContainsAny(ns, "*?[") }

func checkTenantKinds(kinds []TenantKind, rep report) {
	if len(kinds) == 0 {
		rep.errorf("spec.kinds", "at least one kind is required (group and kind; kind \"*\" for every namespaced kind of a group)")
	}
	seen := map[TenantKind]int{}
	for i, k := range kinds {
		field := fmt.Sprintf("spec.kinds[%d]", i)
		switch {
		case k.Kind == "":
			rep.errorf(field+".kind", "required")
		case k.Kind != "*" && strings.ContainsAny(k.Kind, "*?[/ "):
			rep.errorf(field+".kind", "%q: a kind name, or \"*\"", k.Kind)
		}
		if k.Group == "*" || strings.ContainsAny(k.Group, "?[/ ") {
			rep.errorf(field+".group", "%q: an API group name (\"\" for the core group); groups are not globs", k.Group)
		}
		if first, dup := seen[k]; dup {
			rep.errorf(field, "already listed in spec.kinds[%d]", first)
		}
		seen[k] = i
	}
}

// outsideTenantOnly reports whether a tenant profile selects clusters,
// all outside its tenant (checkTenantProfiles warns of those).
func outsideTenantOnly(r *Repository, p *Profile) bool {
	if p.tenant == nil {
		return false
	}
	for _, c := range r.Clusters {
		if p.selects(c.Metadata.Name, c.Metadata.Labels) {
			return true
		}
	}
	return false
}

// checkTenantProfiles warns of tenant profiles whose selector matches
// clusters the tenant may not reach: they are not deployed there. Event
// profiles that would read clusters outside the grant are errors.
func checkTenantProfiles(r *Repository, diags *Diagnostics) {
	for _, p := range r.Profiles {
		t := p.tenant
		if t == nil || p.selector == nil {
			continue
		}
		checkTenantEvents(r, p, report{src: &p.Source, diags: diags})
		var refused []string
		for _, c := range r.Clusters {
			if p.selects(c.Metadata.Name, c.Metadata.Labels) && !t.AllowsCluster(c.Metadata.Name, c.Metadata.Labels) {
				refused = append(refused, c.Metadata.Name)
			}
		}
		if len(refused) > 0 {
			report{src: &p.Source, diags: diags}.warnf(p.selectorField(),
				"selects %s, which tenant %s may not reach: the profile is not deployed there", strings.Join(refused, ", "), t.Metadata.Name)
		}
	}
}

// checkTenantEvents warns of a tenant's event profile whose event source
// selects resources the tenant may never see. (Source clusters outside
// the grant are refused per pair by the daemon and as errors by regatta
// validate, not here: one tenant's profile must not keep a whole commit
// out.)
func checkTenantEvents(r *Repository, p *Profile, rep report) {
	if t := p.Spec.EventTrigger; t != nil {
		if src := r.EventSource(t.EventSourceName); src != nil {
			checkTenantEventSource(p.tenant, src, rep)
		}
	}
}

// checkTenantEventSource warns of resource selectors whose kind or
// namespace the tenant may not read.
func checkTenantEventSource(t *Tenant, src *EventSource, rep report) {
	for i, rs := range src.Spec.ResourceSelectors {
		gk := schema.GroupKind{Group: rs.Group, Kind: rs.Kind}
		switch {
		case !t.AllowsKind(gk, false) && !t.AllowsKind(gk, true):
			rep.warnf("spec.eventTrigger.eventSourceName", "event source %s selects kind %s (resourceSelectors[%d]), which tenant %s may not read: the profile never sees those resources",
				src.Metadata.Name, groupKindName(gk), i, t.Name())
		case rs.Namespace != "" && !t.AllowsNamespace(rs.Namespace):
			rep.warnf("spec.eventTrigger.eventSourceName", "event source %s selects namespace %s (resourceSelectors[%d]), which is not one of tenant %s's namespaces: the profile never sees those resources",
				src.Metadata.Name, rs.Namespace, i, t.Name())
		}
	}
}
