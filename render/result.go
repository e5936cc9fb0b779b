package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

// clone deep-copies a result, so that callers may change their objects
// (the apply engine adds labels) without touching the cached one.
func (res *Result) clone() *Result {
	out := *res
	out.Steps = make([]Step, len(res.Steps))
	for i, s := range res.Steps {
		s.Objects = cloneObjects(s.Objects)
		out.Steps[i] = s
	}
	return &out
}

func cloneObjects(objs []Object) []Object {
	out := make([]Object, len(objs))
	for i, o := range objs {
		out[i] = Object{Unstructured: o.DeepCopy(), Source: o.Source}
	}
	return out
}
