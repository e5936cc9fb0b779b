package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// objectSet is the object changes of one (base render, head render) pair
// of results, shared by every cluster with the same render keys.
type objectSet struct {
	objects []ObjectChange
	counts  Counts

	once sync.Once
	sum  string
}

// emptySet is the set of a pair that changes no object.
func emptySet() *objectSet { return &objectSet{objects: []ObjectChange{}} }

// digest hashes the object changes, once.
func (s *objectSet) digest() string {
	s.once.Do(func() {
		js, _ := json.Marshal(s.objects)
		sum := sha256.Sum256(js)
		s.sum = hex.EncodeToString(sum[:])
	})
	return s.sum
}

// setCache holds object sets by their render keys.
type setCache struct {
	mu sync.Mutex
	m  map[string]*objectSet
}

func newSetCache() *setCache { return &setCache{m: map[string]*objectSet{}} }

func (s *setCache) get(key string) *objectSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key]
}

// put stores set unless another goroutine stored one first; it returns
// the stored set.
func (s *setCache) put(key string, set *objectSet) *objectSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.m[key]; prev != nil {
		return prev
	}
	s.m[key] = set
	return set
}

// objectSet compares two renders of a pair (either may be nil).
func (c *comparison) objectSet(b, h *render.Result, p *pair) *objectSet {
	gone := ActionDeleted
	if p.change == ProfileLost {
		gone = c.withdrawAction(p.profile)
	}
	key := resultKey(b) + "|" + resultKey(h) + "|" + gone
	if s := c.sets.get(key); s != nil {
		return s
	}
	return c.sets.put(key, c.compareResults(b, h, p.profile, gone))
}

func resultKey(r *render.Result) string {
	if r == nil {
		return "-"
	}
	return r.Key
}

// rendered is one object of a render with its add-on.
type rendered struct {
	render.Object
	addon string
	id    string
}

func objectsOf(r *render.Result) ([]rendered, map[string]rendered) {
	if r == nil {
		return nil, map[string]rendered{}
	}
	var list []rendered
	byID := map[string]rendered{}
	for _, st := range r.Steps {
		for _, o := range st.Objects {
			ro := rendered{Object: o, addon: st.Addon, id: identity(o)}
			list = append(list, ro)
			byID[ro.id] = ro
		}
	}
	return list, byID
}

// identity names an object regardless of its API version.
func identity(o render.Object) string {
	gvk := o.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

// compareResults lists created and updated objects in head's apply order,
// then the objects gone, with action gone, in base's order.
func (c *comparison) compareResults(b, h *render.Result, profile, gone string) *objectSet {
	bList, bByID := objectsOf(b)
	hList, hByID := objectsOf(h)
	set := emptySet()
	for _, o := range hList {
		prev, ok := bByID[o.id]
		if !ok {
			set.add(change(ActionCreated, o))
			continue
		}
		if ch, changed := c.updated(profile, prev, o); changed {
			set.add(ch)
		}
	}
	for _, o := range bList {
		if _, ok := hByID[o.id]; !ok {
			set.add(change(gone, o))
		}
	}
	return set
}

func (s *objectSet) add(ch ObjectChange) {
	s.objects = append(s.objects, ch)
	switch ch.Action {
	case ActionCreated:
		s.counts.Created++
	case ActionUpdated:
		s.counts.Updated++
	case ActionDeleted:
		s.counts.Deleted++
	case ActionReleased:
		s.counts.Released++
	}
}

func change(action string, o rendered) ObjectChange {
	return ObjectChange{Action: action, APIVersion: o.GetAPIVersion(), Kind: o.GetKind(),
		Namespace: o.GetNamespace(), Name: o.GetName(), Addon: o.addon, keepsContents: spec.KeptWhileNotEmpty(o.GetAnnotations())}
}

// updated compares an object at both sides; its diff is redacted when the
// object is a Secret or was read from a SOPS-encrypted file.
func (c *comparison) updated(profile string, prev, cur rendered) (ObjectChange, bool) {
	same := reflect.DeepEqual(prev.Object.Object, cur.Object.Object)
	if same && prev.addon == cur.addon {
		return ObjectChange{}, false
	}
	ch := change(ActionUpdated, cur)
	if prev.addon != cur.addon {
		ch.Message = "moves from add-on " + prev.addon + " to " + cur.addon
	}
	if same {
		return ch, true
	}
	before, after := prev.Object.Object, cur.Object.Object
	if mode := c.redaction(profile, prev, cur); mode != redactNone {
		before, after, ch.RedactedKeys = redactPair(before, after, mode)
	}
	ch.Diff = unifiedDiff(ch.Ref(), before, after)
	return ch, true
}
