package apply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// msgGone is the message of a deletion that found nothing to delete.
const msgGone = "already gone"

// pruner deletes or releases inventoried objects of one profile.
type pruner struct {
	kube   client.Client
	mapper meta.RESTMapper
	// reader reads as regatta, also when kube impersonates a tenant.
	reader  reader
	profile string
	fleet   Fleet
	log     *slog.Logger
}

func (p *pass) pruner() *pruner {
	return newPruner(p.c, p.cl, p.writer, p.req.Profile)
}

// newPruner deletes with w and reads with cl.
func newPruner(c *Cluster, cl, w *Client, profile string) *pruner {
	return &pruner{kube: w.Kube, mapper: w.Mapper, reader: reader{kube: cl.Kube, disco: cl.Discovery},
		profile: profile, fleet: c.fleet(), log: c.log()}
}

// deleteOrder returns entries in reverse apply order, with Namespaces and
// then CRDs last: custom resources go before their CRD, namespaced objects
// before their Namespace.
func deleteOrder(entries []InventoryEntry) []InventoryEntry {
	out := slices.Clone(entries)
	slices.Reverse(out)
	slices.SortStableFunc(out, func(a, b InventoryEntry) int { return deleteRank(a) - deleteRank(b) })
	return out
}

func deleteRank(e InventoryEntry) int {
	switch {
	case e.Kind == "Namespace" && e.Group == "":
		return 1
	case e.Kind == "CustomResourceDefinition" && e.Group == "apiextensions.k8s.io":
		return 2
	}
	return 0
}

// prune deletes entries in delete order, reporting each through record, and
// returns the entries that failed to delete (they stay in the inventory).
func (pr *pruner) prune(ctx context.Context, entries []InventoryEntry, record func(ObjectChange)) ([]InventoryEntry, error) {
	var kept []InventoryEntry
	var errs []error
	for _, e := range deleteOrder(entries) {
		ch, err := pr.delete(ctx, e, false)
		if err != nil {
			kept = append(kept, e)
			errs = append(errs, err)
			continue
		}
		record(ch)
	}
	slices.Reverse(kept) // back to apply order
	return kept, errors.Join(errs...)
}

// delete deletes one object unless another profile owns it now or it opts
// out of pruning; with dryRun it only says what it would do.
func (pr *pruner) delete(ctx context.Context, e InventoryEntry, dryRun bool) (ObjectChange, error) {
	ch := ObjectChange{Object: e.ObjectRef, Addon: e.Addon, Action: ActionDeleted}
	live, err := pr.get(ctx, e.ObjectRef)
	if err != nil || live == nil {
		// not a deletion: counting it reported more deletions than objects
		ch.Action, ch.Message = ActionSkipped, msgGone
		return ch, err
	}
	if msg := pr.keepReason(live); msg != "" {
		ch.Action, ch.Message = ActionSkipped, msg
		return ch, nil
	}
	if msg, err := pr.keepNamespace(ctx, e.ObjectRef, live); err != nil || msg != "" {
		ch.Action, ch.Message = ActionSkipped, msg
		return ch, err
	}
	if dryRun || live.DeletionTimestamp != nil {
		return ch, nil
	}
	// Deleted as unstructured: controller-runtime deletes PartialObjectMetadata
	// through its typed client, which knows only the built-in kinds.
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(live.GroupVersionKind())
	obj.SetNamespace(live.Namespace)
	obj.SetName(live.Name)
	uid := live.UID
	err = pr.kube.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) {
		return ch, &ObjectError{Object: e.ObjectRef, Op: "delete", Err: err}
	}
	return ch, nil
}

// keepReason says why an object must not be deleted or released, or "".
func (pr *pruner) keepReason(live *metav1.PartialObjectMetadata) string {
	if live.Kind == "Namespace" && live.Name == InventoryNamespace {
		return "left in place: namespace " + InventoryNamespace + " holds regatta's inventories"
	}
	if !pr.fleet.owns(live.Labels) {
		return "left in place: owned by " + foreign(live.Labels)
	}
	if owner := live.Labels[LabelProfile]; owner != pr.profile {
		if owner == "" {
			return fmt.Sprintf("left in place: no longer labelled %s=%s", LabelProfile, pr.profile)
		}
		return fmt.Sprintf("left in place: owned by profile %s now", owner)
	}
	if live.Annotations[AnnotationPrune] == Disabled {
		return fmt.Sprintf("left in place: annotation %s: %s", AnnotationPrune, Disabled)
	}
	return ""
}

// get reads an object's metadata, nil when it (or its kind) is gone. The
// inventoried version is used when still served, else the preferred one.
func (pr *pruner) get(ctx context.Context, ref ObjectRef) (*metav1.PartialObjectMetadata, error) {
	gk := ref.GroupVersionKind().GroupKind()
	mapping, err := pr.mapper.RESTMapping(gk, ref.Version)
	if meta.IsNoMatchError(err) {
		mapping, err = pr.mapper.RESTMapping(gk)
	}
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, &ObjectError{Object: ref, Op: "get", Err: err}
	}
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(mapping.GroupVersionKind)
	err = pr.kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, &ObjectError{Object: ref, Op: "get", Err: err}
	}
	return live, nil
}
