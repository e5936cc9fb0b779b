package spec

import (
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What a tenant may read and deploy
//
// A tenant's declaration is the one rule for everything its profiles see
// and make; this file and Tenant's cluster and file methods decide it, and
// every path of a render asks them:
//   - files: the tenant's folder (Root; Confine enforces it for add-on
//     paths, overlays, valuesFiles, valuesFrom, substituteFrom, health
//     script files and everything a kustomization names);
//   - clusters: AllowsCluster, for the clusters its profiles deploy to
//     (Profile.Matches) and the clusters its event profiles read
//     (Profile.EventSourceClusters);
//   - objects in a cluster: Refusal, for the objects its profiles deploy
//     and the resources its event profiles see (template data, Lua
//     evaluate and aggregatedSelection scripts): kinds of spec.kinds in
//     namespaces of spec.namespaces, the same rights the tenant's
//     ServiceAccount gets;
//   - SOPS keys: its own decryption recipients.

// Refusal says why the tenant may neither read nor deploy an object of
// kind gk in namespace ns named name, or "" when it may. namespaced tells
// the kind's scope; a namespaced kind in no namespace is refused.
func (t *Tenant) Refusal(gk schema.GroupKind, ns, name string, namespaced bool) string {
	if !namespaced {
		if !t.AllowsKind(gk, true) {
			return fmt.Sprintf("tenant %s may not deploy cluster-scoped kind %s (cluster-scoped kinds must be listed by name in spec.kinds)", t.Name(), groupKindName(gk))
		}
		if gk == (schema.GroupKind{Kind: "Namespace"}) && !t.AllowsNamespace(name) {
			return t.namespaceRefusal(name)
		}
		return ""
	}
	if !t.AllowsKind(gk, false) {
		return fmt.Sprintf("tenant %s may not deploy kind %s (not in spec.kinds)", t.Name(), groupKindName(gk))
	}
	if !t.AllowsNamespace(ns) {
		return t.namespaceRefusal(ns)
	}
	return ""
}

// MayRead reports whether the tenant may see an object: Refusal is "".
func (t *Tenant) MayRead(gk schema.GroupKind, ns, name string, namespaced bool) bool {
	return t.Refusal(gk, ns, name, namespaced) == ""
}

func (t *Tenant) namespaceRefusal(ns string) string {
	return fmt.Sprintf("namespace %s is not one of tenant %s's namespaces (%s)", ns, t.Name(), strings.Join(t.Spec.Namespaces, ", "))
}

func groupKindName(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind + " (core)"
	}
	return gk.Group + "/" + gk.Kind
}

// AllowsKind reports whether spec.kinds allows gk; a cluster-scoped kind
// needs its own entry, "*" covers namespaced kinds only.
func (t *Tenant) AllowsKind(gk schema.GroupKind, clusterScoped bool) bool {
	for _, k := range t.Spec.Kinds {
		if k.Group != gk.Group {
			continue
		}
		if k.Kind == gk.Kind || (k.Kind == "*" && !clusterScoped) {
			return true
		}
	}
	return false
}

// AllowsNamespace reports whether ns is one of the tenant's namespaces
// (names or globs).
func (t *Tenant) AllowsNamespace(ns string) bool {
	if ns == "" {
		return false
	}
	for _, p := range t.Spec.Namespaces {
		if ok, _ := path.Match(p, ns); ok {
			return true
		}
	}
	return false
}

// UngrantedSourcesError refuses an event profile of a tenant that would
// read clusters the tenant was not granted.
type UngrantedSourcesError struct {
	Tenant   string
	Profile  string
	Clusters []string
	// Field is the profile field that selects them.
	Field string
}

func (e *UngrantedSourcesError) Error() string { return e.Field + ": " + e.Reason() }

// Reason is the error without its field.
func (e *UngrantedSourcesError) Reason() string {
	return fmt.Sprintf("selects %s as event source clusters, which tenant %s was not granted (spec.clusters of %s/%s/%s): nothing is read from them",
		strings.Join(e.Clusters, ", "), e.Tenant, TenantsDir, e.Tenant, TenantFile)
}

// EventSourceClusters returns the clusters an event profile reads for
// its destination cluster dest: for a cross-cluster profile, every
// cluster of clusters it watches; otherwise dest itself when watched.
// labelsOf gives a cluster's effective labels. The clusters a tenant's
// profile would read but its tenant was not granted make an
// *UngrantedSourcesError, and then no cluster is returned: nothing of
// theirs may reach the tenant, and a partial read would prune instances.
func (p *Profile) EventSourceClusters(dest *Cluster, clusters []*Cluster, labelsOf func(*Cluster) map[string]string) ([]*Cluster, error) {
	t := p.Spec.EventTrigger
	if t == nil {
		return nil, nil
	}
	candidates := []*Cluster{dest}
	if t.CrossCluster() {
		candidates = clusters
	}
	var out []*Cluster
	var refused []string
	for _, c := range candidates {
		lbls := labelsOf(c)
		if !p.WatchesCluster(c.Metadata.Name, lbls) {
			continue
		}
		if p.tenant != nil && !p.tenant.AllowsCluster(c.Metadata.Name, lbls) {
			refused = append(refused, c.Metadata.Name)
			continue
		}
		out = append(out, c)
	}
	if len(refused) > 0 {
		return nil, &UngrantedSourcesError{
			Tenant:   p.tenant.Name(),
			Profile:  p.Metadata.Name,
			Clusters: refused,
			Field:    p.sourceField(),
		}
	}
	return out, nil
}

// sourceField is the field that selects an event profile's watched
// clusters.
func (p *Profile) sourceField() string {
	if p.Spec.EventTrigger.SourceClusterSelector != nil {
		return "spec.eventTrigger.sourceClusterSelector"
	}
	return p.ownSelectorField()
}

// selectorField is the field that selects the clusters a profile deploys
// to.
func (p *Profile) selectorField() string {
	if t := p.Spec.EventTrigger; t != nil && t.DestinationClusterSelector != nil {
		return "spec.eventTrigger.destinationClusterSelector"
	}
	if t := p.Spec.EventTrigger; t != nil && t.SourceClusterSelector != nil {
		return "spec.eventTrigger.sourceClusterSelector"
	}
	return p.ownSelectorField()
}

func (p *Profile) ownSelectorField() string {
	if p.Spec.ClusterSelector.IsEmpty() {
		return "spec.clusterRefs"
	}
	return "spec.clusterSelector"
}
