package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// memoryFactor estimates the in-memory size of objects from their JSON
// size (maps and interfaces cost several times the encoded bytes: a small
// ConfigMap decodes to about 1.8 KiB from 350 B of JSON).
const memoryFactor = 4

// storedResult is a result as the cache keeps it between uses: its objects
// encoded as JSON, about a fifth of their decoded size. A fleet whose
// clusters each render their own objects (a namespace per cluster, say)
// keeps every cluster's results; decoded, they were the largest part of an
// idle daemon's heap.
type storedResult struct {
	res     Result           // Steps without their Objects
	objects [][]storedObject // by step
	// encoded counts the objects' JSON and sources and a slot per object.
	encoded int64
}

type storedObject struct {
	json   []byte
	source string
}

// store computes the result's hash over its canonical JSON form (map keys
// sorted) and returns the result as the cache keeps it.
func (res *Result) store() (*storedResult, error) {
	h := sha256.New()
	st := &storedResult{res: *res, objects: make([][]storedObject, len(res.Steps))}
	st.res.Steps = slices.Clone(res.Steps)
	for i, s := range res.Steps {
		fmt.Fprintf(h, "step %s %s %d %d\n", s.Addon, s.Phase, s.Weight, len(s.Objects))
		st.objects[i] = make([]storedObject, len(s.Objects))
		for j, o := range s.Objects {
			js, err := json.Marshal(o.Object)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
			}
			h.Write(js)
			h.Write([]byte{'\n'})
			st.objects[i][j] = storedObject{json: js, source: o.Source}
			st.encoded += int64(len(js)+len(o.Source)) + 64
		}
		st.res.Steps[i].Objects = nil
	}
	res.Hash = hex.EncodeToString(h.Sum(nil))
	st.res.Hash = res.Hash
	return st, nil
}

// cost is the stored result's size in memory (estimated).
func (st *storedResult) cost() int64 { return st.encoded + 256 }

// decodedCost is the size of the result's objects decoded (estimated).
func (st *storedResult) decodedCost() int64 { return st.encoded*memoryFactor + 256 }

// decode returns the result with its objects decoded afresh.
func (st *storedResult) decode() (*Result, error) {
	out := st.res
	out.Artifacts = slices.Clone(st.res.Artifacts)
	out.Steps = slices.Clone(st.res.Steps)
	for i, objs := range st.objects {
		out.Steps[i].Objects = make([]Object, len(objs))
		for j, o := range objs {
			var m map[string]any
			if err := utiljson.Unmarshal(o.json, &m); err != nil {
				return nil, fmt.Errorf("cached object %s: %w", o.source, err)
			}
			out.Steps[i].Objects[j] = Object{Unstructured: &unstructured.Unstructured{Object: m}, Source: o.source}
		}
	}
	return &out, nil
}

// share returns the result as one caller sees it: a Result of its own with
// Steps and Objects slices of its own, holding the cached objects
// themselves. A caller may change the Result's fields, append to or reorder
// its slices, or replace an element with a copy without touching the cache;
// the objects behind the pointers are shared with the cache and every other
// caller, so they are read-only. It costs a slice per step and no copy of
// any object: deep-copying every object on every cache hit was most of the
// CPU of planning a large fleet (10,000 clusters × 20 profiles).
func (res *Result) share() *Result {
	out := *res
	out.Artifacts = slices.Clone(res.Artifacts)
	out.Steps = make([]Step, len(res.Steps))
	for i, s := range res.Steps {
		s.Objects = slices.Clone(s.Objects)
		out.Steps[i] = s
	}
	return &out
}

// DeepCopy returns a copy of the result whose objects are the caller's to
// change (results of Renderer.Render are shared and read-only).
func (res *Result) DeepCopy() *Result {
	out := *res
	out.Artifacts = slices.Clone(res.Artifacts)
	out.Steps = make([]Step, len(res.Steps))
	for i, s := range res.Steps {
		s.Objects = deepCopyObjects(s.Objects)
		out.Steps[i] = s
	}
	return &out
}

func deepCopyObjects(objs []Object) []Object {
	if objs == nil {
		return nil
	}
	out := make([]Object, len(objs))
	for i, o := range objs {
		out[i] = Object{Unstructured: o.DeepCopy(), Source: o.Source}
	}
	return out
}
