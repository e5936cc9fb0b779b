package apply

import (
	"k8s.io/apimachinery/pkg/api/meta"
)

// placeInNamespace puts the objects of a step that have no namespace, and
// whose kind the cluster serves as namespaced, into ns: the namespace the
// renderer chose for the add-on (the Helm release namespace, or
// "default"), as helm install, Flux and kubectl do. The renderer already
// placed the objects of built-in kinds and of kinds whose CRD it rendered;
// these are the custom kinds whose scope only the cluster knows. A kind
// the cluster does not serve (yet) is left alone: its apply fails with the
// server's own error. Namespaces that are set are never changed.
func placeInNamespace(mapper meta.RESTMapper, ns string, ds []desired) {
	if ns == "" {
		return
	}
	for _, d := range ds {
		if d.obj.GetNamespace() != "" {
			continue
		}
		gvk := d.obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace {
			d.obj.SetNamespace(ns)
		}
	}
}
