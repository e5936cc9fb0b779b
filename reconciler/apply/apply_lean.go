package apply

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KindOverrides is implemented by a HealthChecker that can tell, from the
// kind alone, whether it judges objects of that kind. A checker that does
// not implement it is taken to judge every kind.
type KindOverrides interface {
	Overrides(group, kind string) bool
}

// statusless are the kinds that have no status: kstatus finds them Current
// unless they are being deleted, from their metadata alone.
var statusless = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}:      true,
	{Kind: "Secret"}:         true,
	{Kind: "ServiceAccount"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
}

// metadataOnly reports whether the answer to applying o is needed only for
// its metadata: its kind has no status and no health override judges it.
func (p *pass) metadataOnly(o *unstructured.Unstructured) bool {
	gk := o.GroupVersionKind().GroupKind()
	if !statusless[gk] {
		return false
	}
	if p.health.checker == nil {
		return true
	}
	ko, ok := p.health.checker.(KindOverrides)
	return ok && !ko.Overrides(gk.Group, gk.Kind)
}

// applyForMetadata server-side applies o and reads back only the
// metadata of the result (the API server sends it as
// PartialObjectMetadata), which costs the server and regatta a fraction of
// encoding and decoding the whole object. o is not changed.
func applyForMetadata(ctx context.Context, c client.Client, o *unstructured.Unstructured) (*metav1.PartialObjectMetadata, error) {
	data, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(o.GroupVersionKind())
	m.SetNamespace(o.GetNamespace())
	m.SetName(o.GetName())
	err = c.Patch(ctx, m, client.RawPatch(types.ApplyPatchType, data), client.ForceOwnership, client.FieldOwner(FieldManager))
	return m, err
}

// adoptedFields reports whether an applied object existed before the
// apply: another manager, or an update, owns some of its fields.
func adoptedFields(fields []metav1.ManagedFieldsEntry) bool {
	for _, mf := range fields {
		if mf.Manager != FieldManager || mf.Operation != metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}
