package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/spec"
)

// selectOverlay returns the first overlay for addon that matches the
// cluster's labels, with its index, or nil and -1. An invalid selector is
// an error, with the overlay's index.
func selectOverlay(p *spec.Profile, addon string, lbls map[string]string) (*spec.Overlay, int, error) {
	for i := range p.Spec.Overlays {
		o := &p.Spec.Overlays[i]
		if o.Addon != addon {
			continue
		}
		sel, err := o.ClusterSelector.Compile()
		if err != nil {
			return nil, i, fmt.Errorf("spec.overlays[%d].clusterSelector: %w", i, err)
		}
		if sel.Matches(labelSet(lbls)) {
			return o, i, nil
		}
	}
	return nil, -1, nil
}

// labelSet adapts a map to labels.Labels without copying.
type labelSet map[string]string

func (l labelSet) Has(k string) bool              { _, ok := l[k]; return ok }
func (l labelSet) Get(k string) string            { return l[k] }
func (l labelSet) Lookup(k string) (string, bool) { v, ok := l[k]; return v, ok }

// indexAnnotation marks each object during patching, to put it back in
// its step afterwards (patches may delete objects).
const indexAnnotation = "render.regatta.dev/index"

// applyPatches runs patches over the objects of steps with kustomize on an
// in-memory filesystem, keeping object order and steps.
func applyPatches(steps []Step, patches []spec.Patch) ([]Step, error) {
	var all []*Object
	var stream bytes.Buffer
	for si := range steps {
		for oi := range steps[si].Objects {
			o := &steps[si].Objects[oi]
			setAnnotation(o, indexAnnotation, strconv.Itoa(len(all)))
			all = append(all, o)
			js, err := json.Marshal(o.Object)
			if err != nil {
				return nil, err
			}
			stream.WriteString("---\n")
			stream.Write(js)
			stream.WriteByte('\n')
		}
	}
	patched, err := patchStream(stream.Bytes(), patches)
	if err != nil {
		return nil, err
	}
	return regroup(steps, all, patched)
}

// patchStream applies patches to a YAML stream and returns the objects.
func patchStream(stream []byte, patches []spec.Patch) ([]Object, error) {
	mem := filesys.MakeFsInMemory()
	kus, err := yaml.Marshal(map[string]any{
		"resources":   []string{"objects.yaml"},
		"patches":     patchMaps(patches),
		"sortOptions": map[string]any{"order": string(types.FIFOSortOrder)},
	})
	if err != nil {
		return nil, err
	}
	if err := mem.WriteFile("/objects.yaml", stream); err != nil {
		return nil, err
	}
	if err := mem.WriteFile("/kustomization.yaml", kus); err != nil {
		return nil, err
	}
	lockShared() // a kustomization of ours, with no OpenAPI schema
	m, err := krusty.MakeKustomizer(kustomizeOptions()).Run(mem, "/")
	kustomizeMu.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("kustomize: %w", err)
	}
	return objectsOf(m, "", true)
}

// regroup puts patched objects back into their steps by index annotation.
func regroup(steps []Step, orig []*Object, patched []Object) ([]Step, error) {
	byIndex := make(map[int]Object, len(patched))
	for _, p := range patched {
		i, err := strconv.Atoi(p.GetAnnotations()[indexAnnotation])
		if err != nil || i < 0 || i >= len(orig) {
			return nil, fmt.Errorf("patched object %s/%s lost its index", p.GetKind(), p.GetName())
		}
		deleteAnnotation(&p, indexAnnotation)
		p.Source = orig[i].Source
		byIndex[i] = p
	}
	out := make([]Step, 0, len(steps))
	next := 0
	for _, s := range steps {
		ns := s
		ns.Objects = nil
		for range s.Objects {
			if p, ok := byIndex[next]; ok {
				ns.Objects = append(ns.Objects, p)
			}
			next++
		}
		out = append(out, ns)
	}
	return out, nil
}

func setAnnotation(o *Object, k, v string) {
	ann := o.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[k] = v
	o.SetAnnotations(ann)
}

func deleteAnnotation(o *Object, k string) {
	ann := o.GetAnnotations()
	delete(ann, k)
	if len(ann) == 0 {
		ann = nil
	}
	o.SetAnnotations(ann)
}
