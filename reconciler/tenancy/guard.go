// Package tenancy enforces tenant declarations (spec.Tenant) on rendered
// objects: namespaces, kinds and cluster-scoped kinds. regatta validate,
// render and plan call Check on offline renders; the daemon calls it again
// with the cluster's scopes before anything is applied, and prepares the
// tenant's identity in the cluster (rbac.go) so that its RBAC is the last
// line behind both.
package tenancy

import (
	"fmt"
	"io/fs"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// Scope tells whether a kind is namespaced; known is false when the scope
// cannot be told (a custom kind offline).
type Scope func(gk schema.GroupKind) (namespaced, known bool)

// Options configure a check.
type Options struct {
	// FS is the repository tree, to place an object at its file's line.
	FS fs.FS
	// Scope tells kinds' scopes; nil treats an object without a namespace
	// as cluster-scoped (offline, the strictest reading).
	Scope Scope
}

// Violation is one rendered object a tenant, or a namespace-scoped
// cluster entry (Cluster set, Tenant empty), may not receive.
type Violation struct {
	Tenant  string
	Cluster string
	Profile string
	Object  string
	File    string
	Line    int
	Reason  string
}

// Error formats the violation as file:line: object: reason.
func (v Violation) Error() string {
	where := v.File
	if v.Line > 0 {
		where = fmt.Sprintf("%s:%d", v.File, v.Line)
	}
	return fmt.Sprintf("%s: %s: %s", where, v.Object, v.Reason)
}

// Error is a refused render: every violation of one profile.
type Error struct {
	Violations []Violation
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		lines[i] = v.Error()
	}
	who := "tenant " + e.Violations[0].Tenant
	if e.Violations[0].Tenant == "" {
		who = "cluster " + e.Violations[0].Cluster
	}
	return fmt.Sprintf("%s: profile %s: refused, nothing applied or deleted: %s",
		who, e.Violations[0].Profile, strings.Join(lines, "; "))
}

// Unwrap exposes the violations to errors.As.
func (e *Error) Unwrap() []error {
	out := make([]error, len(e.Violations))
	for i, v := range e.Violations {
		out[i] = v
	}
	return out
}

// Check returns the objects of a tenant profile's render that its tenant
// may not deploy; nil for a platform profile.
func Check(prof *spec.Profile, res *render.Result, opts Options) []Violation {
	t := prof.Tenant()
	if t == nil || res == nil {
		return nil
	}
	return check(prof, res, opts, Violation{Tenant: t.Name()}, t.Refusal)
}

// CheckCluster returns the objects of a render that a namespace-scoped
// cluster entry may not receive (spec.Cluster.Refusal): cluster-scoped
// kinds and namespaces it does not list. nil for a whole-cluster entry.
func CheckCluster(c *spec.Cluster, prof *spec.Profile, res *render.Result, opts Options) []Violation {
	if !c.NamespaceScoped() || res == nil {
		return nil
	}
	rule := func(gk schema.GroupKind, ns, _ string, namespaced bool) string { return c.Refusal(gk, ns, namespaced) }
	return check(prof, res, opts, Violation{Cluster: c.Metadata.Name}, rule)
}

// ErrCluster returns CheckCluster's violations as an *Error, or nil.
func ErrCluster(c *spec.Cluster, prof *spec.Profile, res *render.Result, opts Options) error {
	if vs := CheckCluster(c, prof, res, opts); len(vs) > 0 {
		return &Error{Violations: vs}
	}
	return nil
}

// refusalRule says why an object may not be deployed, or "".
type refusalRule func(gk schema.GroupKind, ns, name string, namespaced bool) string

// check returns a violation, based on who, for each object rule refuses.
func check(prof *spec.Profile, res *render.Result, opts Options, who Violation, r refusalRule) []Violation {
	var out []Violation
	for _, st := range res.Steps {
		for _, o := range st.Objects {
			reason := refusal(r, o, st.Namespace, opts.Scope)
			if reason == "" {
				continue
			}
			file, line := locate(opts.FS, prof, st.Addon, o)
			out = append(out, Violation{
				Tenant:  who.Tenant,
				Cluster: who.Cluster,
				Profile: prof.Metadata.Name,
				Object:  describe(o),
				File:    file,
				Line:    line,
				Reason:  reason,
			})
		}
	}
	return out
}

// Err returns Check's violations as an *Error, or nil.
func Err(prof *spec.Profile, res *render.Result, opts Options) error {
	if vs := Check(prof, res, opts); len(vs) > 0 {
		return &Error{Violations: vs}
	}
	return nil
}

func describe(o render.Object) string {
	if ns := o.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s/%s/%s", o.GetKind(), ns, o.GetName())
	}
	return fmt.Sprintf("%s/%s", o.GetKind(), o.GetName())
}

// refusal says why the tenant may not deploy o, or "": the tenant's one
// rule (spec.Tenant.Refusal) with the object's scope as the cluster (or,
// offline, its namespace) tells it.
func refusal(r refusalRule, o render.Object, stepNS string, scope Scope) string {
	gk := o.GroupVersionKind().GroupKind()
	ns := o.GetNamespace()
	namespaced := ns != ""
	if scope != nil {
		if n, known := scope(gk); known {
			namespaced = n
			if namespaced && ns == "" {
				ns = stepNS // where the apply engine places it
			}
		}
	}
	return r(gk, ns, o.GetName(), namespaced)
}
