package tenancy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// FieldManager is the server-side apply field manager of the identity
// objects regatta creates for tenants.
const FieldManager = "regatta-tenancy"

// LabelTenant marks the ServiceAccount and RBAC objects of a tenant.
const LabelTenant = "regatta.dev/tenant"

var writeVerbs = []any{"get", "list", "watch", "create", "update", "patch", "delete"}

// ScopeOf tells kinds' scopes from a cluster's REST mapper.
func ScopeOf(mapper meta.RESTMapper) Scope {
	return func(gk schema.GroupKind) (bool, bool) {
		m, err := mapper.RESTMapping(gk)
		if err != nil {
			return false, false
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, true
	}
}

// Namespaces returns the namespaces of a render's namespaced objects.
func Namespaces(res *render.Result) []string {
	set := map[string]bool{}
	for _, st := range res.Steps {
		for _, o := range st.Objects {
			if ns := o.GetNamespace(); ns != "" {
				set[ns] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// EnsureIdentity creates, with regatta's own identity, the tenant's
// ServiceAccount and the RBAC its declaration implies: in each of
// namespaces that exists (the declared names and those the render uses), a
// Role for its namespaced kinds bound to the ServiceAccount, and a
// ClusterRole for the cluster-scoped kinds it lists by name. Nothing is
// done when the declaration uses a ServiceAccount the cluster has.
func EnsureIdentity(ctx context.Context, kube client.Client, mapper meta.RESTMapper, t *spec.Tenant, namespaces []string) error {
	sa := t.Spec.ServiceAccount
	if !sa.Creates() {
		return nil
	}
	if err := ensureNamespace(ctx, kube, sa.Namespace); err != nil {
		return err
	}
	objs := []*unstructured.Unstructured{identityObject("v1", "ServiceAccount", sa.Namespace, sa.Name, t)}
	nsRules, clusterRules := rules(mapper, t)
	for _, ns := range withDeclared(t, namespaces) {
		if !exists(ctx, kube, ns) {
			continue // created later by its profile; the next pass binds it
		}
		objs = append(objs, role("Role", ns, t, nsRules), binding("RoleBinding", ns, t))
	}
	if len(clusterRules) > 0 {
		objs = append(objs, role("ClusterRole", "", t, clusterRules), binding("ClusterRoleBinding", "", t))
	}
	var errs []error
	for _, o := range objs {
		if err := kube.Patch(ctx, o, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			errs = append(errs, fmt.Errorf("tenant %s: %s %s/%s: %w", t.Name(), o.GetKind(), o.GetNamespace(), o.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// withDeclared adds the tenant's namespaces named exactly (not globs) to
// the allowed namespaces of the list.
func withDeclared(t *spec.Tenant, namespaces []string) []string {
	set := map[string]bool{}
	for _, ns := range t.Spec.Namespaces {
		if !spec.IsNamespacePattern(ns) {
			set[ns] = true
		}
	}
	for _, ns := range namespaces {
		if t.AllowsNamespace(ns) {
			set[ns] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// rules maps spec.kinds to RBAC rules: namespaced kinds (and "*") for the
// Roles, cluster-scoped kinds listed by name for the ClusterRole. Kinds
// the cluster does not serve get no rule.
func rules(mapper meta.RESTMapper, t *spec.Tenant) (namespaced, cluster []any) {
	for _, k := range t.Spec.Kinds {
		if k.Kind == "*" {
			namespaced = append(namespaced, rule(k.Group, "*"))
			continue
		}
		m, err := mapper.RESTMapping(schema.GroupKind{Group: k.Group, Kind: k.Kind})
		if err != nil {
			continue
		}
		switch {
		case m.Scope.Name() == meta.RESTScopeNameNamespace:
			namespaced = append(namespaced, rule(k.Group, m.Resource.Resource))
		case k.Group == "" && k.Kind == "Namespace":
			cluster = append(cluster, namespaceRules(t)...)
		default:
			cluster = append(cluster, rule(k.Group, m.Resource.Resource))
		}
	}
	return namespaced, cluster
}

func rule(group, resource string) any {
	return map[string]any{"apiGroups": []any{group}, "resources": []any{resource}, "verbs": writeVerbs}
}

// namespaceRules let the tenant create namespaces (RBAC cannot restrict a
// create by name: the guard does) and change or delete only those it names
// exactly.
func namespaceRules(t *spec.Tenant) []any {
	out := []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"namespaces"}, "verbs": []any{"create", "list", "watch"}}}
	var names []any
	for _, ns := range t.Spec.Namespaces {
		if !spec.IsNamespacePattern(ns) {
			names = append(names, ns)
		}
	}
	if len(names) > 0 {
		out = append(out, map[string]any{"apiGroups": []any{""}, "resources": []any{"namespaces"},
			"resourceNames": names, "verbs": []any{"get", "update", "patch", "delete"}})
	}
	return out
}

func objectName(t *spec.Tenant) string { return "regatta-tenant-" + t.Name() }

func identityObject(apiVersion, kind, ns, name string, t *spec.Tenant) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(map[string]string{LabelTenant: t.Name()})
	return u
}

func role(kind, ns string, t *spec.Tenant, rules []any) *unstructured.Unstructured {
	u := identityObject("rbac.authorization.k8s.io/v1", kind, ns, objectName(t), t)
	u.Object["rules"] = rules
	if rules == nil {
		u.Object["rules"] = []any{}
	}
	return u
}

func binding(kind, ns string, t *spec.Tenant) *unstructured.Unstructured {
	roleKind := "Role"
	if kind == "ClusterRoleBinding" {
		roleKind = "ClusterRole"
	}
	u := identityObject("rbac.authorization.k8s.io/v1", kind, ns, objectName(t), t)
	sa := t.Spec.ServiceAccount
	u.Object["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": roleKind, "name": objectName(t)}
	u.Object["subjects"] = []any{map[string]any{"kind": "ServiceAccount", "name": sa.Name, "namespace": sa.Namespace}}
	return u
}

func exists(ctx context.Context, kube client.Client, ns string) bool {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	return kube.Get(ctx, client.ObjectKey{Name: ns}, u) == nil
}

func ensureNamespace(ctx context.Context, kube client.Client, ns string) error {
	if exists(ctx, kube, ns) {
		return nil
	}
	u := identityObject("v1", "Namespace", "", ns, &spec.Tenant{})
	u.SetLabels(nil)
	if err := kube.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	return nil
}
