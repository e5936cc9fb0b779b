package render

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The two schema profiles patch the same list: with the kustomization's
// OpenAPI schema (merge key "name") the patch merges into it, with the
// built-in schema, which does not know the kind, it replaces it.
var schemaItems = map[string]string{
	"schema-custom":  "[b=patched a=kept]",
	"schema-builtin": "[b=patched]",
}

// TestKustomizeCustomSchema renders kustomizations with and without a
// custom OpenAPI schema from many goroutines at once, among other
// kustomize builds (run with -race): each gets its own schema, and the
// custom one reaches no other build.
func TestKustomizeCustomSchema(t *testing.T) {
	fsys := memRepo(t)
	names := []string{"schema-custom", "schema-builtin", "kustomize", "overlays"}
	r := New(Options{CacheBytes: -1})
	for i, name := range []string{"schema-builtin", "schema-custom", "schema-builtin"} {
		res, err := r.Render(context.Background(), Request{FS: fsys, Profile: loadProfile(t, fsys, name), Cluster: fleetCluster(i)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := itemsOf(res), schemaItems[name]; got != want {
			t.Errorf("%s (render %d, one at a time): items %s, want %s", name, i, got, want)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				name := names[(g+i)%len(names)]
				req := Request{FS: fsys, Profile: loadProfile(t, fsys, name), Cluster: fleetCluster(g*8 + i)}
				res, err := r.Render(context.Background(), req)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				want, ok := schemaItems[name]
				if got := itemsOf(res); ok && got != want {
					t.Errorf("%s: items %s, want %s", name, got, want)
				}
			}
		}()
	}
	wg.Wait()
}

// itemsOf prints spec.items of the MyKind object of a result.
func itemsOf(res *Result) string {
	for _, o := range res.Objects() {
		if o.GetKind() != "MyKind" {
			continue
		}
		items, _, _ := unstructured.NestedSlice(o.Object, "spec", "items")
		out := make([]string, 0, len(items))
		for _, it := range items {
			m, _ := it.(map[string]any)
			out = append(out, fmt.Sprintf("%v=%v", m["name"], m["value"]))
		}
		return fmt.Sprint(out)
	}
	return "no MyKind"
}

// An idle Renderer releases kustomize's parsed schema; builds after a
// release, and builds racing releases (run with -race), parse it again
// and render as before.
func TestSchemaReleasedWhenIdle(t *testing.T) {
	fsys := memRepo(t)
	r := New(Options{CacheBytes: -1, SchemaIdleTimeout: 10 * time.Millisecond})
	var released atomic.Int32
	r.schema.release = func() { released.Add(1); releaseSchema() }
	render := func(name string, i int) {
		t.Helper()
		res, err := r.Render(context.Background(), Request{FS: fsys, Profile: loadProfile(t, fsys, name), Cluster: fleetCluster(i)})
		if err != nil {
			t.Errorf("%s: %v", name, err) // not Fatal: also called from goroutines
			return
		}
		if got, want := itemsOf(res), schemaItems[name]; got != want {
			t.Errorf("%s (render %d): items %s, want %s", name, i, got, want)
		}
	}
	render("schema-builtin", 0)
	deadline := time.Now().Add(10 * time.Second)
	for released.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the schema was not released after the builds stopped")
		}
		time.Sleep(5 * time.Millisecond) // polling for the release
	}
	render("schema-builtin", 1)
	render("schema-custom", 2)

	r.schema.after = time.Microsecond // releases race the builds below
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 6 {
				name := []string{"schema-builtin", "schema-custom"}[(g+i)%2]
				render(name, 10+g*6+i)
			}
		})
	}
	wg.Wait()
}
