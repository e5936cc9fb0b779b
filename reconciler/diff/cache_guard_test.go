package diff

import (
	"context"
	"reflect"
	"testing"

	"github.com/regatta-dev/regatta/render"
)

// cacheGuard keeps deep copies of every render of some sides, made before
// the code under test runs with the same renderer. Renders are shared with
// the render cache (their objects are read-only), so check fails when that
// code changed an object in place.
type cacheGuard struct {
	r    *render.Renderer
	reqs []render.Request
	got  []*render.Result // as returned: the cached objects
	want []*render.Result // deep copies
}

// guardCache renders every (cluster, profile) pair of the sides; failed
// renders are left out.
func guardCache(t *testing.T, r *render.Renderer, sides ...Side) *cacheGuard {
	t.Helper()
	g := &cacheGuard{r: r}
	for _, s := range sides {
		for _, c := range s.Fleet.Clusters {
			facts := s.Facts(c)
			for _, p := range s.Fleet.Profiles {
				if !p.Matches(c.Metadata.Name, facts.Labels) {
					continue
				}
				req := render.Request{FS: s.Fleet.FS, Revision: s.Revision, Profile: p, Cluster: facts, TreeHash: s.TreeHash}
				if _, err := r.Render(context.Background(), req); err != nil {
					continue
				}
				// A hit: the decoded result the cache keeps while in use,
				// which the check's hits share.
				res, err := r.Render(context.Background(), req)
				if err != nil {
					continue
				}
				g.reqs, g.got, g.want = append(g.reqs, req), append(g.got, res), append(g.want, res.DeepCopy())
			}
		}
	}
	if len(g.reqs) == 0 {
		t.Fatal("guardCache: nothing rendered")
	}
	return g
}

// check renders the pairs again: each must be a cache hit (the same
// objects, or the test proves nothing) with the content it had.
func (g *cacheGuard) check(t *testing.T) {
	t.Helper()
	for i, req := range g.reqs {
		res, err := g.r.Render(context.Background(), req)
		if err != nil {
			t.Fatalf("%s/%s: %v", req.Cluster.Name, req.Profile.Metadata.Name, err)
		}
		got, want := res.Objects(), g.want[i].Objects()
		before := g.got[i].Objects()
		if len(got) != len(want) {
			t.Fatalf("%s/%s: %d objects, want %d", req.Cluster.Name, req.Profile.Metadata.Name, len(got), len(want))
		}
		for j, o := range got {
			if o.Unstructured != before[j].Unstructured {
				t.Fatalf("%s/%s: %s is not the cached object (evicted?): the guard proves nothing",
					req.Cluster.Name, req.Profile.Metadata.Name, o.GetName())
			}
			if !reflect.DeepEqual(o.Object, want[j].Object) {
				t.Errorf("%s/%s: the cached %s %s changed:\n got  %v\n want %v",
					req.Cluster.Name, req.Profile.Metadata.Name, o.GetKind(), o.GetName(), o.Object, want[j].Object)
			}
		}
	}
}
