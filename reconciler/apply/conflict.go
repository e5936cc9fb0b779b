package apply

import (
	"context"
	"fmt"

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
}

// resolveConflicts drops the objects another profile keeps (recording a
// Conflict for each), notes those this profile takes over, and remembers
// which objects carry regatta's labels already (the others are applied
// without ssa's GET and dry-run: see applyFresh).
func (p *pass) resolveConflicts(ctx context.Context, st []desired) ([]*unstructured.Unstructured, error) {
	owners, err := labelledOwners(ctx, p.cl.Kube, st)
	if err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, 0, len(st))
	for _, d := range st {
		ref := RefOf(d.obj)
		o, labelled := owners[ref.key()]
		switch {
		case !labelled:
			objs = append(objs, d.obj)
		case o.profile == p.req.Profile:
			p.labelled[ref.key()] = true
			objs = append(objs, d.obj)
		case p.req.tier() < o.tier:
			p.takeovers[ref.key()] = fmt.Sprintf("taken over from profile %s (tier %d)", o.profile, o.tier)
			p.labelled[ref.key()] = true
			objs = append(objs, d.obj)
		case p.req.releases(o.profile):
			p.takeovers[ref.key()] = fmt.Sprintf("taken over from profile %s, which is withdrawn", o.profile)
			p.labelled[ref.key()] = true
			objs = append(objs, d.obj)
		default:
			p.conflict(d.addon, ref, o)
		}
	}
	return objs, nil
}

func (p *pass) conflict(addon string, ref ObjectRef, o owner) {
	p.res.Conflicts = append(p.res.Conflicts, Conflict{Object: ref, Addon: addon, Owner: o.profile, OwnerTier: o.tier})
	err := &ConflictError{Object: ref, Owner: o.profile, OwnerTier: o.tier, Tier: p.req.tier()}
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

// labelledOwners finds, with one metadata list per kind and namespace
// (label-filtered: only objects carrying regatta.dev/profile), which
// objects of st exist with a profile label, and whose.
func labelledOwners(ctx context.Context, c client.Client, st []desired) (map[ObjectRef]owner, error) {
	wanted := map[listScope]map[ObjectRef]bool{}
	for _, d := range st {
		scope := listScope{gvk: d.obj.GroupVersionKind(), namespace: d.obj.GetNamespace()}
		if wanted[scope] == nil {
			wanted[scope] = map[ObjectRef]bool{}
		}
		wanted[scope][RefOf(d.obj).key()] = true
	}
	sel, err := labels.Parse(LabelProfile)
	if err != nil {
		return nil, err
	}
	owners := map[ObjectRef]owner{}
	absent, err := absentNamespaces(ctx, c, wanted)
	if err != nil {
		return nil, err
	}
	for scope, refs := range wanted {
		if absent[scope.namespace] {
			continue // a namespace that does not exist holds no objects
		}
		if err := listOwners(ctx, c, scope, sel, refs, owners); err != nil {
			return nil, err
		}
	}
	return owners, nil
}

func listOwners(ctx context.Context, c client.Client, scope listScope, sel labels.Selector,
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
			owners[ref] = owner{profile: item.Labels[LabelProfile], tier: tierOf(item.Annotations)}
		}
	}
	return nil
}

// absentNamespaces returns the namespaces of the scopes that do not exist.
func absentNamespaces(ctx context.Context, c client.Client, wanted map[listScope]map[ObjectRef]bool) (map[string]bool, error) {
	out := map[string]bool{}
	seen := map[string]bool{}
	for scope := range wanted {
		if scope.namespace == "" || seen[scope.namespace] {
			continue
		}
		seen[scope.namespace] = true
		ns := &metav1.PartialObjectMetadata{}
		ns.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"})
		err := c.Get(ctx, client.ObjectKey{Name: scope.namespace}, ns)
		switch {
		case apierrors.IsNotFound(err):
			out[scope.namespace] = true
		case err != nil:
			return nil, err
		}
	}
	return out, nil
}
