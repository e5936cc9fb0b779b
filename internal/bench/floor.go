package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Bookkeeping is what a reconciler that keeps regatta's guarantees must
// send beyond the minimal program, whatever its own code costs: for every
// pair an inventory written before anything is created (so a crash leaves
// nothing unknown) and again when it is done (complete, with its render
// hash, so a restart re-applies nothing), ownership labels on every object
// (so drift watches and withdrawals can select them), and one watch per
// applied kind (drift correction). The minimal program with it is the
// floor of regatta's first rollout on the same machine.
type Bookkeeping struct {
	// Watched are the pairs (namespaces) whose objects are watched, those
	// of the ContinuousWithDriftDetection profiles.
	Watched []string
}

// watch opens a cluster's drift watches, one per kind of the bench fleet
// (Namespaces too) on the watched pairs' objects, each after a list as an
// informer does, and reads (decodes) their events until ctx ends.
func (b Bookkeeping) watch(ctx context.Context, cfg *rest.Config) error {
	if len(b.Watched) == 0 {
		return nil // no drift-detected pair: regatta would watch nothing
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	sel := "regattx.dev/profile in (" + strings.Join(b.Watched, ",") + ")"
	kinds := append([]schema.GroupVersionResource{{Version: "v1", Resource: "namespaces"}}, benchKinds...)
	errs := make([]error, len(kinds))
	var wg sync.WaitGroup
	for i, gvr := range kinds {
		wg.Go(func() {
			list, err := dc.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				errs[i] = fmt.Errorf("list %s: %w", gvr.Resource, err)
				return
			}
			w, err := dc.Resource(gvr).Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: list.GetResourceVersion()})
			if err != nil {
				errs[i] = fmt.Errorf("watch %s: %w", gvr.Resource, err)
				return
			}
			go func() {
				for range w.ResultChan() {
				}
			}()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// floorNamespace holds the floor's inventories. Its labels, annotations and
// inventories are regatta's with "regattx" for "regatta": the same sizes,
// and nothing regatta's own method in the same round takes for its own.
const floorNamespace = "regattx-system"

// label sets the ownership labels and tier annotation regatta sets, with
// the pair (the object's namespace) as profile.
func (Bookkeeping) label(o *unstructured.Unstructured, cluster string) {
	labels := o.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["regattx.dev/profile"] = profileOf(o)
	labels["regattx.dev/addon"] = "app"
	labels["regattx.dev/cluster"] = cluster
	o.SetLabels(labels)
	ann := o.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["regattx.dev/tier"] = "100"
	o.SetAnnotations(ann)
}

// profileOf names an object's pair: its namespace, the Namespace's name.
func profileOf(o *unstructured.Unstructured) string {
	if o.GetKind() == "Namespace" {
		return o.GetName()
	}
	return o.GetNamespace()
}

// inventories returns one inventory ConfigMap per pair of objs, shaped as
// regatta's, complete or not.
func (Bookkeeping) inventories(objs []*unstructured.Unstructured, complete bool) []*unstructured.Unstructured {
	type entry struct {
		Group, Version, Kind, Namespace, Name, Addon string
	}
	byPair := map[string][]entry{}
	var order []string
	for _, o := range objs {
		p := profileOf(o)
		if byPair[p] == nil {
			order = append(order, p)
		}
		gvk := o.GroupVersionKind()
		byPair[p] = append(byPair[p], entry{gvk.Group, gvk.Version, gvk.Kind, o.GetNamespace(), o.GetName(), "app"})
	}
	out := make([]*unstructured.Unstructured, 0, len(order))
	for _, p := range order {
		objects, _ := json.Marshal(byPair[p])
		data := map[string]any{"revision": "0123456789abcdef0123456789abcdef01234567", "syncMode": "ContinuousWithDriftDetection",
			"stopMatchingBehavior": "WithdrawPolicies", "tier": "100", "complete": strconv.FormatBool(complete),
			"objects": string(objects), "health": `{"healthy":0}`, "renderHash": ""}
		if complete {
			data["renderHash"], data["health"] = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", fmt.Sprintf(`{"healthy":%d}`, len(byPair[p]))
		}
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "regattx-inv-" + p, "namespace": floorNamespace,
				"labels": map[string]any{"regattx.dev/inventory": p, "app.kubernetes.io/managed-by": "regattx"}},
			"data": data,
		}})
	}
	return out
}

// applyCluster is the minimal program's cluster with the bookkeeping.
func (b Bookkeeping) applyCluster(ctx context.Context, k client.Client, cfg *rest.Config, cluster string, namespaces, rest []*unstructured.Unstructured) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := b.watch(wctx, cfg); err != nil {
		return err
	}
	all := append(append([]*unstructured.Unstructured(nil), namespaces...), rest...)
	for _, o := range all {
		b.label(o, cluster)
	}
	system := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": floorNamespace}}}
	steps := [][]*unstructured.Unstructured{{system}, b.inventories(all, false), namespaces, rest, b.inventories(all, true)}
	for _, st := range steps {
		if err := applyAll(ctx, k, st); err != nil {
			return err
		}
	}
	return nil
}
