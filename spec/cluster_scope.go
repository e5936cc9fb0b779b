package spec

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Namespace-scoped cluster entries
//
// A Cluster whose spec.namespaces is set stands for credentials that reach
// only those namespaces of a (possibly shared) cluster. Everything regatta
// deploys there must be a namespaced object in one of them (Refusal), and
// everything it reads or writes for the entry stays inside them: its
// inventories (in InventoryNamespace), drift and event watches, classifier
// lists and prune.

// NamespaceScoped reports whether the entry reaches only spec.namespaces.
func (c *Cluster) NamespaceScoped() bool { return len(c.Spec.Namespaces) > 0 }

// InventoryNamespace is the namespace of the entry's own namespaces that
// holds its inventories: the first listed; "" for a whole-cluster entry
// (regatta-system then).
func (c *Cluster) InventoryNamespace() string {
	if !c.NamespaceScoped() {
		return ""
	}
	return c.Spec.Namespaces[0]
}

// Refusal says why an object of kind gk in namespace ns (its effective
// namespace) may not be deployed through a namespace-scoped entry, or ""
// when it may. namespaced tells the kind's scope. A whole-cluster entry
// refuses nothing.
func (c *Cluster) Refusal(gk schema.GroupKind, ns string, namespaced bool) string {
	if !c.NamespaceScoped() {
		return ""
	}
	if !namespaced {
		return fmt.Sprintf("cluster %s is namespace-scoped (spec.namespaces): it may not receive cluster-scoped kind %s", c.Metadata.Name, groupKindName(gk))
	}
	if ns == "" || !slices.Contains(c.Spec.Namespaces, ns) {
		if ns == "" {
			ns = "(none)"
		}
		return fmt.Sprintf("namespace %s is not one of cluster %s's namespaces (spec.namespaces: %s)", ns, c.Metadata.Name, strings.Join(c.Spec.Namespaces, ", "))
	}
	return ""
}

// checkClusterNamespaces requires namespace names, each listed once.
func checkClusterNamespaces(rep report, nss []string) {
	seen := map[string]bool{}
	for i, ns := range nss {
		field := fmt.Sprintf("spec.namespaces[%d]", i)
		if ns == "" {
			rep.errorf(field, "empty namespace name")
			continue
		}
		checkDNS(rep, field, ns, validation.IsDNS1123Label)
		if seen[ns] {
			rep.errorf(field, "%q is listed twice", ns)
		}
		seen[ns] = true
	}
}
