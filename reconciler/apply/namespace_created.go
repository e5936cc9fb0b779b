package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/spec"
)

// A Namespace a Helm add-on's createNamespace renders carries
// spec.AnnotationCreatedNamespace. regatta creates it only when it is
// missing: one that exists and is not already this profile's (created by
// it, or in its inventory) is left alone, out of the pass and of the
// inventory, so it is never adopted and never pruned. Prune deletes such a
// namespace only when nothing but what regatta applied is left in it
// (namespace_contents.go), unless it is annotated
// spec.AnnotationPruneContents: enabled.

// PhaseNamespace is the step of a Helm add-on that creates its release
// namespace (render.PhaseNamespace).
const PhaseNamespace Phase = "namespace"

// msgNotAdopted is the change message of a created namespace that existed.
const msgNotAdopted = "left alone: the namespace exists and is not this profile's (createNamespace creates a missing namespace, it never adopts one)"

// MsgKeptNotEmpty starts the change message of a created namespace that
// prune left in place because other objects are in it.
const MsgKeptNotEmpty = "left in place: not empty"

// isCreatedNamespace reports whether obj is a Namespace marked as created
// by createNamespace.
func isCreatedNamespace(kind, group string, annotations map[string]string) bool {
	return kind == "Namespace" && group == "" && annotations[spec.AnnotationCreatedNamespace] == "true"
}

// leaveExisting drops from the steps every created namespace that exists
// and is not this profile's, recording each as skipped (through record).
// It runs before the intent is recorded, so such a namespace never enters
// the inventory.
func (p *pass) leaveExisting(ctx context.Context, inv *Inventory, steps [][]desired, record func(ObjectChange)) error {
	var known map[ObjectRef]bool
	if inv != nil {
		known = inv.keys()
	}
	for i, st := range steps {
		out := st[:0]
		for _, d := range st {
			if !isCreatedNamespace(d.obj.GetKind(), d.obj.GroupVersionKind().Group, d.obj.GetAnnotations()) {
				out = append(out, d)
				continue
			}
			ok, err := p.mayApplyNamespace(ctx, d.obj, known)
			if err != nil {
				return err
			}
			if ok {
				out = append(out, d)
				continue
			}
			record(ObjectChange{Object: RefOf(d.obj), Addon: d.addon, Action: ActionSkipped, Message: msgNotAdopted})
		}
		steps[i] = out
	}
	return nil
}

// mayApplyNamespace reports whether the created namespace obj may be
// applied: it is missing, or it is this profile's (its labels name this
// profile, or one this pass takes over, and it was created by regatta or
// is in the inventory).
func (p *pass) mayApplyNamespace(ctx context.Context, obj *unstructured.Unstructured, known map[ObjectRef]bool) (bool, error) {
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := p.cl.Kube.Get(ctx, client.ObjectKey{Name: obj.GetName()}, live)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, &ObjectError{Object: RefOf(obj), Op: "get", Err: err}
	}
	owner := live.Labels[LabelProfile]
	if !p.c.fleet().owns(live.Labels) || (owner != p.req.Profile && !p.req.releases(owner)) {
		return false, nil
	}
	created := isCreatedNamespace("Namespace", "", live.Annotations)
	return created || known[RefOf(obj).key()], nil
}

// keepNamespace says why a created namespace must not be deleted: other
// objects are in it and it does not opt in to losing them. "" for other
// objects, an empty namespace, or one annotated prune-contents: enabled.
func (pr *pruner) keepNamespace(ctx context.Context, ref ObjectRef, live *metav1.PartialObjectMetadata) (string, error) {
	if !isCreatedNamespace(live.Kind, live.GroupVersionKind().Group, live.Annotations) || !spec.KeptWhileNotEmpty(live.Annotations) {
		return "", nil
	}
	found, more, err := namespaceContents(ctx, pr.reader, live.Name)
	if err != nil {
		return "", &ObjectError{Object: ref, Op: "listing the contents", Err: err}
	}
	if len(found) == 0 {
		return "", nil
	}
	list := fmt.Sprint(found)
	if more {
		list = list[:len(list)-1] + " ...]"
	}
	msg := fmt.Sprintf("%s: namespace %s, which regatta created, still holds %s: left with its labels, never deleted with what is in it; "+
		"delete them and the namespace by hand (annotate a namespace %s: %s before its add-on goes to have it deleted with its contents)",
		MsgKeptNotEmpty, live.Name, list, spec.AnnotationPruneContents, spec.PruneContentsEnabled)
	pr.log.Warn("namespace left in place", "profile", pr.profile, "namespace", live.Name, "holds", list)
	return msg, nil
}
