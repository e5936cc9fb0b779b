package apply

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// owner is the profile that owns an object, and its tier.
type owner struct {
	profile string
	tier    int
	fleet   string // set when another fleet owns the object
	tenant  string // the tenant of the owning profile, "" for the platform
	labels  map[string]string
	// resourceVersion is the object's as listed ("" when its owner comes
	// from an inventory listing): an apply that leaves it changed nothing.
	resourceVersion string
}

// resolveConflicts drops the objects another profile keeps (recording a
// Conflict for each), notes those this profile takes over, and remembers
// which objects carry regatta's labels already, with their resourceVersion
// (see applySet).
func (p *pass) resolveConflicts(ctx context.Context, st []desired) ([]*unstructured.Unstructured, error) {
	owners, err := labelledOwners(ctx, p.cl.Kube, p.c.fleet(), st)
	if err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, 0, len(st))
	cl := newClaims(p.cl.Kube, p.c.fleet())
	for _, d := range st {
		ref := RefOf(d.obj)
		o, labelled, real, err := p.candidate(ctx, cl, owners, ref)
		if err != nil {
			return nil, err
		}
		switch {
		case !labelled:
			objs = append(objs, d.obj)
		case o.fleet != "":
			p.conflict(d.addon, ref, o) // never taken over, whatever the tier
		case o.profile == p.req.Profile:
			p.labelled[ref.key()] = o.resourceVersion
			objs = append(objs, d.obj)
		case !real: // the label names a profile whose inventory lacks it
			p.takeovers[ref.key()] = relabelled(o)
			p.labelled[ref.key()] = o.resourceVersion
			objs = append(objs, d.obj)
		case o.tenant != p.req.Owner:
			p.conflict(d.addon, ref, o) // tiers apply only within an owner
		case p.req.tier() < o.tier:
			p.takeovers[ref.key()] = fmt.Sprintf("taken over from profile %s (tier %d)", o.profile, o.tier)
			p.labelled[ref.key()] = o.resourceVersion
			objs = append(objs, d.obj)
		case p.req.releases(o.profile):
			p.takeovers[ref.key()] = fmt.Sprintf("taken over from profile %s, which is withdrawn", o.profile)
			p.labelled[ref.key()] = o.resourceVersion
			objs = append(objs, d.obj)
		default:
			p.conflict(d.addon, ref, o)
		}
	}
	return objs, nil
}

func (p *pass) conflict(addon string, ref ObjectRef, o owner) {
	p.res.Conflicts = append(p.res.Conflicts, Conflict{
		Object:     ref,
		Addon:      addon,
		Owner:      o.profile,
		OwnerTier:  o.tier,
		OwnerFleet: o.fleet,
	})
	err := &ConflictError{Object: ref, Owner: o.profile, OwnerTier: o.tier, Tier: p.req.tier(), OwnerFleet: o.fleet}
	p.conflicts = append(p.conflicts, err)
	p.res.record(ObjectChange{Object: ref, Addon: addon, Action: ActionSkipped, Message: err.Error()})
}

func (p *pass) conflictKeys() map[ObjectRef]bool {
	set := make(map[ObjectRef]bool, len(p.res.Conflicts))
	for _, c := range p.res.Conflicts {
		set[c.Object.key()] = true
	}
	return set
}

// listScope is one metadata-only list request: a kind in a namespace.
type listScope struct {
	gvk       schema.GroupVersionKind
	namespace string
}

// maxNamespaceGets is the most Namespaces of a step looked up one by one;
// a step with more lists them instead.
const maxNamespaceGets = 4

// labelledOwners finds which objects of st exist with a profile label, and
// whose. It reads the metadata of the step's namespaces first: scopes in a
// namespace that does not exist hold nothing and are not listed, and the
// step's Namespaces are answered from the same reads. Every other kind and
// namespace costs one label-filtered metadata list.
func labelledOwners(ctx context.Context, c client.Client, f Fleet, st []desired) (map[ObjectRef]owner, error) {
	wanted := map[listScope]map[ObjectRef]bool{}
	for _, d := range st {
		scope := listScope{gvk: d.obj.GroupVersionKind(), namespace: d.obj.GetNamespace()}
		if wanted[scope] == nil {
			wanted[scope] = map[ObjectRef]bool{}
		}
		wanted[scope][RefOf(d.obj).key()] = true
	}
	nss, err := stepNamespaces(ctx, c, f, wanted)
	if err != nil {
		return nil, err
	}
	sel, err := labels.Parse(LabelProfile)
	if err != nil {
		return nil, err
	}
	owners := map[ObjectRef]owner{}
	for scope, refs := range wanted {
		if scope.namespace != "" && nss[scope.namespace] == nil {
			continue // a namespace that does not exist holds no objects
		}
		if isNamespace(scope.gvk) && allRead(refs, nss) {
			for ref := range refs {
				if m := nss[ref.Name]; m != nil && m.Labels[LabelProfile] != "" {
					owners[ref] = f.ownerOf(m.Labels, m.Annotations, m.ResourceVersion)
				}
			}
			continue
		}
		if err := listOwners(ctx, c, f, scope, sel, refs, owners); err != nil {
			return nil, err
		}
	}
	return owners, nil
}

func isNamespace(gvk schema.GroupVersionKind) bool { return gvk.Group == "" && gvk.Kind == "Namespace" }

// namespacesToRead returns the namespaces of the namespaced scopes, and the
// step's own Namespaces when they are few.
func namespacesToRead(wanted map[listScope]map[ObjectRef]bool) []string {
	set := map[string]bool{}
	for scope, refs := range wanted {
		switch {
		case scope.namespace != "":
			set[scope.namespace] = true
		case isNamespace(scope.gvk) && len(refs) <= maxNamespaceGets:
			for ref := range refs {
				set[ref.Name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// stepNamespaces reads the namespaces of a step (readNamespaces). A
// namespace-scoped entry may not read Namespaces and deploys only into its
// own, which exist: they are taken as existing without a read.
func stepNamespaces(ctx context.Context, c client.Client, f Fleet, wanted map[listScope]map[ObjectRef]bool) (map[string]*metav1.PartialObjectMetadata, error) {
	if !f.scoped() {
		return readNamespaces(ctx, c, namespacesToRead(wanted))
	}
	out := map[string]*metav1.PartialObjectMetadata{}
	for scope := range wanted {
		if scope.namespace != "" {
			out[scope.namespace] = &metav1.PartialObjectMetadata{}
		}
	}
	return out, nil
}

// readNamespaces reads the metadata of each namespace; a namespace that
// does not exist maps to nil.
func readNamespaces(ctx context.Context, c client.Client, names []string) (map[string]*metav1.PartialObjectMetadata, error) {
	out := make(map[string]*metav1.PartialObjectMetadata, len(names))
	for _, name := range names {
		ns := &metav1.PartialObjectMetadata{}
		ns.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"})
		err := c.Get(ctx, client.ObjectKey{Name: name}, ns)
		switch {
		case apierrors.IsNotFound(err):
			out[name] = nil
		case err != nil:
			return nil, fmt.Errorf("look up namespace %s: %w", name, err)
		default:
			out[name] = ns
		}
	}
	return out, nil
}

// allRead reports whether every Namespace of refs was read.
func allRead(refs map[ObjectRef]bool, nss map[string]*metav1.PartialObjectMetadata) bool {
	for ref := range refs {
		if _, ok := nss[ref.Name]; !ok {
			return false
		}
	}
	return true
}

func listOwners(ctx context.Context, c client.Client, f Fleet, scope listScope, sel labels.Selector,
	refs map[ObjectRef]bool, owners map[ObjectRef]owner) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(scope.gvk.GroupVersion().WithKind(scope.gvk.Kind + "List"))
	err := c.List(ctx, list, client.InNamespace(scope.namespace), client.MatchingLabelsSelector{Selector: sel})
	if meta.IsNoMatchError(err) {
		return nil // the kind does not exist yet: nobody owns such objects
	}
	if err != nil {
		return fmt.Errorf("look up owners of %s objects: %w", scope.gvk.Kind, err)
	}
	for _, item := range list.Items {
		ref := ObjectRef{Group: scope.gvk.Group, Kind: scope.gvk.Kind, Namespace: item.Namespace, Name: item.Name}
		if refs[ref] {
			owners[ref] = f.ownerOf(item.Labels, item.Annotations, item.ResourceVersion)
		}
	}
	return nil
}
