package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
)

// memoryFactor estimates the in-memory size of objects from their JSON
// size (maps and interfaces cost several times the encoded bytes).
const memoryFactor = 4

// finish computes the result's hash over its canonical JSON form (map
// keys sorted) and returns an estimate of its memory size.
func (res *Result) finish() (int64, error) {
	h := sha256.New()
	var n int64
	for _, s := range res.Steps {
		fmt.Fprintf(h, "step %s %s %d %d\n", s.Addon, s.Phase, s.Weight, len(s.Objects))
		for _, o := range s.Objects {
			js, err := json.Marshal(o.Object)
			if err != nil {
				return 0, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
			}
			h.Write(js)
			h.Write([]byte{'\n'})
			n += int64(len(js)+len(o.Source)) + 64
		}
	}
	res.Hash = hex.EncodeToString(h.Sum(nil))
	return n*memoryFactor + 256, nil
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
