package apply

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// contentsShown bounds the objects a kept namespace's message names.
const contentsShown = 5

// reader reads a cluster as regatta itself (never impersonating): what
// prune needs to know before it deletes.
type reader struct {
	kube  client.Client
	disco discovery.DiscoveryInterface
}

// ignoredKinds hold nothing a namespace's deletion may lose: events,
// leader-election leases, and the Endpoints a Service's controller keeps.
var ignoredKinds = map[schema.GroupKind]bool{
	{Kind: "Event"}: true, {Group: "events.k8s.io", Kind: "Event"}: true,
	{Group: "coordination.k8s.io", Kind: "Lease"}: true, {Kind: "Endpoints"}: true,
}

// presetObjects are made in every namespace by Kubernetes' controllers.
var presetObjects = map[string]bool{"ConfigMap/kube-root-ca.crt": true, "ServiceAccount/default": true}

// namespaceContents lists (up to contentsShown, and whether there are
// more) the objects in ns that its deletion would lose: every object of
// every listable namespaced kind except those being deleted, those
// another object owns (ownerReferences: they go with their owner, which
// is listed when it is in ns), the ignored kinds and the preset objects.
func namespaceContents(ctx context.Context, r reader, ns string) ([]string, bool, error) {
	kinds, err := listableKinds(r.disco)
	if err != nil {
		return nil, false, err
	}
	var found []string
	for _, gvk := range kinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.kube.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, false, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for _, o := range list.Items {
			name := gvk.Kind + "/" + o.Name
			if o.DeletionTimestamp != nil || len(o.OwnerReferences) > 0 || presetObjects[name] {
				continue
			}
			if len(found) == contentsShown {
				return found, true, nil
			}
			found = append(found, name)
		}
	}
	return found, false, nil
}

// listableKinds are the namespaced kinds the cluster serves that can be
// listed, at their preferred versions, minus the ignored kinds, sorted.
func listableKinds(disco discovery.DiscoveryInterface) ([]schema.GroupVersionKind, error) {
	lists, err := disco.ServerPreferredNamespacedResources()
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	var out []schema.GroupVersionKind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, res := range l.APIResources {
			gvk := gv.WithKind(res.Kind)
			if strings.Contains(res.Name, "/") || !slices.Contains(res.Verbs, "list") || ignoredKinds[gvk.GroupKind()] {
				continue
			}
			out = append(out, gvk)
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int {
		return strings.Compare(a.Group+"/"+a.Kind, b.Group+"/"+b.Kind)
	})
	return out, nil
}
