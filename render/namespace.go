package render

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regatta-dev/regatta/spec"
)

// DefaultNamespace is where a namespaced object without metadata.namespace
// goes, as with kubectl: plain manifests and Kustomize output (without
// targetNamespace), and Helm charts without releaseNamespace.
const DefaultNamespace = "default"

// clusterScoped lists the built-in kinds of Kubernetes 1.37 that are not
// namespaced, by group ("" for core), and those older clusters served:
// PodSecurityPolicy (policy/v1beta1 until 1.25; kube-prometheus still
// renders them), ClusterCIDR (until 1.29) and ResourceClass (until 1.31).
var clusterScoped = map[string][]string{
	"":                             {"Namespace", "Node", "PersistentVolume", "ComponentStatus"},
	"rbac.authorization.k8s.io":    {"ClusterRole", "ClusterRoleBinding"},
	"apiextensions.k8s.io":         {"CustomResourceDefinition"},
	"apiregistration.k8s.io":       {"APIService"},
	"admissionregistration.k8s.io": {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"},
	"storage.k8s.io":               {"StorageClass", "CSIDriver", "CSINode", "VolumeAttachment", "VolumeAttributesClass"},
	"scheduling.k8s.io":            {"PriorityClass"},
	"node.k8s.io":                  {"RuntimeClass"},
	"networking.k8s.io":            {"IngressClass", "IPAddress", "ServiceCIDR", "ClusterCIDR"},
	"policy":                       {"PodSecurityPolicy"},
	"certificates.k8s.io":          {"CertificateSigningRequest", "ClusterTrustBundle"},
	"flowcontrol.apiserver.k8s.io": {"FlowSchema", "PriorityLevelConfiguration"},
	"resource.k8s.io":              {"DeviceClass", "ResourceSlice", "DeviceTaintRule", "ResourceClass"},
	"storagemigration.k8s.io":      {"StorageVersionMigration"},
	"internal.apiserver.k8s.io":    {"StorageVersion"},
	"authentication.k8s.io":        {"TokenReview", "SelfSubjectReview"},
	"authorization.k8s.io":         {"SubjectAccessReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview"},
}

// builtinGroups are the API groups Kubernetes itself serves: every kind of
// theirs that clusterScoped does not list is namespaced.
var builtinGroups = []string{
	"", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "rbac.authorization.k8s.io",
	"storage.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io",
	"node.k8s.io", "certificates.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io",
	"apiregistration.k8s.io", "flowcontrol.apiserver.k8s.io", "resource.k8s.io", "authentication.k8s.io",
	"authorization.k8s.io", "storagemigration.k8s.io", "internal.apiserver.k8s.io",
}

// scopes tells namespaced kinds from cluster-scoped ones, offline: the
// built-in kinds, and custom kinds whose CustomResourceDefinition is among
// the profile's objects (true: cluster-scoped). Other custom kinds are not
// known until the cluster is asked; the apply engine does that (see
// reconciler/apply/namespace.go) with Step.Namespace.
type scopes struct {
	cluster map[schema.GroupKind]bool
	builtin map[string]bool
}

func newScopes(steps []Step) scopes {
	s := scopes{cluster: map[schema.GroupKind]bool{}, builtin: map[string]bool{}}
	for _, g := range builtinGroups {
		s.builtin[g] = true
	}
	for g, kinds := range clusterScoped {
		for _, k := range kinds {
			s.cluster[schema.GroupKind{Group: g, Kind: k}] = true
		}
	}
	for _, st := range steps {
		for _, o := range st.Objects {
			s.learnCRD(o.Unstructured)
		}
	}
	return s
}

// learnCRD records the scope a CustomResourceDefinition declares.
func (s scopes) learnCRD(o *unstructured.Unstructured) {
	if o.GetKind() != "CustomResourceDefinition" || o.GroupVersionKind().Group != "apiextensions.k8s.io" {
		return
	}
	group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
	scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
	if kind != "" {
		s.cluster[schema.GroupKind{Group: group, Kind: kind}] = scope == "Cluster"
	}
}

// namespaced reports whether the kind of o is known to be namespaced.
func (s scopes) namespaced(o *unstructured.Unstructured) bool {
	gk := o.GroupVersionKind().GroupKind()
	cluster, known := s.cluster[gk]
	return (known && !cluster) || (!known && s.builtin[gk.Group])
}

// defaultNamespaces gives every object without a namespace whose kind is
// known to be namespaced the namespace of its add-on (defaults maps add-on
// names to it): the Helm release namespace, as `helm install` and Flux do,
// the Kustomize targetNamespace, or DefaultNamespace. It records that namespace as Step.Namespace for the
// objects of other kinds. Objects already carrying a namespace, and
// cluster-scoped ones, are kept. Objects are replaced by copies, never
// changed in place.
func defaultNamespaces(steps []Step, defaults map[string]string) {
	sc := newScopes(steps)
	for i := range steps {
		ns := defaults[steps[i].Addon]
		if ns == "" {
			ns = DefaultNamespace
		}
		steps[i].Namespace = ns
		for j, o := range steps[i].Objects {
			if o.GetNamespace() != "" || !sc.namespaced(o.Unstructured) {
				continue
			}
			c := o.DeepCopy()
			c.SetNamespace(ns)
			steps[i].Objects[j] = Object{Unstructured: c, Source: o.Source}
		}
	}
}

// PhaseNamespace is the phase of the step that creates a Helm add-on's
// release namespace (helm.createNamespace): before its pre hooks.
const PhaseNamespace = "namespace"

// createdNamespaceStep is the step that creates the release namespace of
// a Helm add-on with createNamespace: a Namespace marked with
// spec.AnnotationCreatedNamespace, so the apply creates it only when it is
// missing and prunes it only when nothing else is in it. Nothing for a
// namespace every cluster has.
func createdNamespaceStep(addon, field string, h *spec.HelmSource, profileFile string) (Step, bool) {
	ns := h.ReleaseNamespace
	if !h.CreateNamespace || ns == "" || spec.PresetNamespaces[ns] {
		return Step{}, false
	}
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{
			"name":        ns,
			"annotations": map[string]any{spec.AnnotationCreatedNamespace: "true"},
		},
	}}
	src := fmt.Sprintf("%s (%s.createNamespace)", profileFile, field)
	return Step{Addon: addon, Phase: PhaseNamespace, Objects: []Object{{Unstructured: o, Source: src}}}, true
}

// isCreatedNamespace reports whether o is a Namespace createNamespace
// rendered.
func isCreatedNamespace(o Object) bool {
	return o.GetKind() == "Namespace" && o.GroupVersionKind().Group == "" &&
		o.GetAnnotations()[spec.AnnotationCreatedNamespace] == "true"
}

// dropDuplicateNamespaces removes a created Namespace that the profile
// renders already: a Namespace another add-on declares (that one is
// applied as any object), or one an earlier add-on creates (two charts in
// one release namespace). Steps left empty are removed.
func dropDuplicateNamespaces(steps []Step) []Step {
	declared, created := map[string]bool{}, map[string]bool{}
	for _, st := range steps {
		for _, o := range st.Objects {
			if o.GetKind() == "Namespace" && o.GroupVersionKind().Group == "" && !isCreatedNamespace(o) {
				declared[o.GetName()] = true
			}
		}
	}
	out := make([]Step, 0, len(steps))
	for _, st := range steps {
		if st.Phase == PhaseNamespace {
			var keep []Object // a new slice: the step's may be the cache's
			for _, o := range st.Objects {
				if !declared[o.GetName()] && !created[o.GetName()] {
					keep = append(keep, o)
				}
				created[o.GetName()] = true
			}
			if len(keep) == 0 {
				continue
			}
			st.Objects = keep
		}
		out = append(out, st)
	}
	return out
}
