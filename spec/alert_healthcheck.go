package spec

import (
	"fmt"
	"io/fs"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// AlertHealthCheck is a Lua health check over any kind, in the spirit of
// Sveltos' HealthCheck: on each selected cluster, every pass lists the
// objects its resourceSelectors select and runs its script over them. The
// script sees the global resources (an array of the objects) and returns,
// from its top level or from function evaluate(), hs with hs.resources:
// an array of {resource = <object>, status = "Healthy" | "Progressing" |
// "Degraded" | "Suspended", message = "..."}. Resources it leaves out are
// healthy.
type AlertHealthCheck struct {
	// Name names the check in messages and in the cluster's record.
	Name string `yaml:"name"`
	// ResourceSelectors select the objects the script reads.
	ResourceSelectors []HealthResourceSelector `yaml:"resourceSelectors"`
	// Script is the Lua source; ScriptFile a repository path to it
	// instead (a tenant's: inside its folder). Exactly one is set.
	Script     string `yaml:"script,omitempty"`
	ScriptFile string `yaml:"scriptFile,omitempty"`
}

// HealthResourceSelector selects objects of one kind in a cluster.
type HealthResourceSelector struct {
	Group   string `yaml:"group,omitempty"`
	Version string `yaml:"version"`
	Kind    string `yaml:"kind"`
	// Namespace limits the list to one namespace; empty lists every
	// namespace (required in a tenant's alert: one of its namespaces).
	Namespace string `yaml:"namespace,omitempty"`
	// LabelSelector selects by label, as the API server filters lists.
	LabelSelector LabelSelector `yaml:"labelSelector,omitempty"`
}

// GroupKind is the selector's group and kind.
func (s HealthResourceSelector) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: s.Group, Kind: s.Kind}
}

// MaxHealthCheckObjects is the most objects one resource selector of an
// alert's health check lists on one cluster in one pass; the record says
// when a list was cut there.
const MaxHealthCheckObjects = 1000

// HealthCheckScript returns the name errors show for the alert's i-th
// health check's script and its source, read from fsys (the tree of the
// revision) for a scriptFile; a tenant's file is read inside its folder.
func (a *Alert) HealthCheckScript(fsys fs.FS, i int) (name, source string, err error) {
	h := a.Spec.HealthChecks[i]
	if h.ScriptFile == "" {
		return fmt.Sprintf("%s spec.healthChecks[%d].script", a.Source.File, i), h.Script, nil
	}
	if a.tenant != nil {
		fsys = Confine(fsys, a.tenant.Root())
	}
	p, err := ResolvePath(fsys, h.ScriptFile)
	if err != nil {
		return "", "", fmt.Errorf("%s: spec.healthChecks[%d].scriptFile: %w", a.Source.File, i, err)
	}
	b, err := fs.ReadFile(fsys, p)
	if err != nil {
		return "", "", fmt.Errorf("%s: spec.healthChecks[%d].scriptFile: %w", a.Source.File, i, err)
	}
	return h.ScriptFile, string(b), nil
}

// validateAlertHealthChecks checks an alert's healthChecks: names, the
// selectors, the Lua (parsed, as classifiers' are) and, for a tenant's
// alert, that it reads only kinds and namespaces the tenant was granted.
func validateAlertHealthChecks(r *Repository, a *Alert, rep report) {
	s := &a.Spec
	if len(s.HealthChecks) > 0 && len(s.On) > 0 && !s.Watches(AlertOnHealthCheckDegraded) {
		rep.warnf("spec.on", "the alert has healthChecks but does not name %s: they run and are recorded, and send nothing", AlertOnHealthCheckDegraded)
	}
	seen := map[string]int{}
	for i, h := range s.HealthChecks {
		f := fmt.Sprintf("spec.healthChecks[%d]", i)
		if first, dup := seen[h.Name]; dup && h.Name != "" {
			rep.errorf(f+".name", "%q is already the name of spec.healthChecks[%d]", h.Name, first)
		}
		seen[h.Name] = i
		if h.Name == "" {
			rep.errorf(f+".name", "required")
		} else {
			checkDNS(rep, f+".name", h.Name, validation.IsDNS1123Label)
		}
		checkHealthSelectors(rep, f, h.ResourceSelectors, a.tenant)
		checkHealthScript(r, rep, f, h, a.tenant)
	}
}

func checkHealthSelectors(rep report, f string, sels []HealthResourceSelector, t *Tenant) {
	if len(sels) == 0 {
		rep.errorf(f+".resourceSelectors", "at least one resource selector is required")
	}
	for j, rs := range sels {
		sf := fmt.Sprintf("%s.resourceSelectors[%d]", f, j)
		if rs.Version == "" {
			rep.errorf(sf+".version", "required (v1 for core kinds)")
		}
		if rs.Kind == "" {
			rep.errorf(sf+".kind", "required")
		}
		checkSelector(rep, sf+".labelSelector", rs.LabelSelector)
		if t != nil {
			checkTenantHealthSelector(rep, sf, rs, t)
		}
	}
}

// checkTenantHealthSelector keeps a tenant's health check to what its
// profiles may read: a kind of spec.kinds in one of spec.namespaces.
func checkTenantHealthSelector(rep report, sf string, rs HealthResourceSelector, t *Tenant) {
	if rs.Namespace == "" {
		rep.errorf(sf+".namespace", "required in a tenant's alert: one of tenant %s's namespaces (%s/%s spec.namespaces)", t.Name(), t.Root(), TenantFile)
	} else if !t.AllowsNamespace(rs.Namespace) {
		rep.errorf(sf+".namespace", "%s", t.namespaceRefusal(rs.Namespace))
	}
	if rs.Kind != "" && !t.AllowsKind(rs.GroupKind(), false) {
		rep.errorf(sf+".kind", "tenant %s may not read kind %s (not in %s/%s spec.kinds)", t.Name(), groupKindName(rs.GroupKind()), t.Root(), TenantFile)
	}
}

func checkHealthScript(r *Repository, rep report, f string, h AlertHealthCheck, t *Tenant) {
	switch {
	case (h.Script == "") == (h.ScriptFile == ""):
		rep.errorf(f, "set exactly one of script or scriptFile")
	case h.ScriptFile != "":
		fsys := r.FS
		if t != nil && fsys != nil {
			fsys = Confine(fsys, t.Root())
		}
		checkScriptFile(fsys, rep, f+".scriptFile", h.ScriptFile)
	default:
		checkLua(rep, f+".script", h.Script)
	}
}
