package render

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/regatta-dev/regatta/spec"
)

// memRepo copies the test repository into memory, so tests can change it.
func memRepo(t testing.TB) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS(repoDir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(os.DirFS(repoDir), p)
		m[p] = &fstest.MapFile{Data: data, Mode: 0o644}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fleetCluster is one of a synthetic fleet: every cluster has its own
// name, zone and values; tier picks one of three overlay selections.
func fleetCluster(i int) ClusterFacts {
	tier := []string{"gold", "silver", "bronze"}[i%3]
	return ClusterFacts{
		Name:              fmt.Sprintf("cluster-%04d", i),
		Labels:            map[string]string{"fleet": "yes", "tier": tier, "zone": fmt.Sprintf("z%d", i%17)},
		Values:            map[string]any{"index": i},
		KubernetesVersion: fmt.Sprintf("v1.3%d.0", 5+i%3),
	}
}

func TestCacheFleetRendersEachSelectionOnce(t *testing.T) {
	for _, concurrent := range []bool{false, true} {
		t.Run(fmt.Sprintf("concurrent=%v", concurrent), func(t *testing.T) {
			fsys := memRepo(t)
			prof := loadProfile(t, fsys, "fleet")
			r := New(Options{})
			hashes := renderFleet(t, r, fsys, prof, 1000, concurrent)
			hits, misses := r.CacheStats()
			if misses != 3 || hits != 997 {
				t.Errorf("hits %d misses %d, want 997 and 3", hits, misses)
			}
			if len(hashes) != 3 {
				t.Errorf("%d distinct outputs, want 3", len(hashes))
			}
		})
	}
}

// renderFleet renders prof for n clusters and returns the distinct hashes.
func renderFleet(t testing.TB, r *Renderer, fsys fs.FS, prof *spec.Profile, n int, concurrent bool) map[string]bool {
	var mu sync.Mutex
	hashes := map[string]bool{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		do := func() {
			req := Request{FS: fsys, Revision: "rev1", Profile: prof, Cluster: fleetCluster(i)}
			res, err := r.Render(context.Background(), req)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			hashes[res.Hash] = true
			mu.Unlock()
		}
		if !concurrent {
			do()
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() { defer wg.Done(); defer func() { <-sem }(); do() }()
	}
	wg.Wait()
	return hashes
}

func TestCacheTemplatedAddonRendersPerCluster(t *testing.T) {
	fsys := memRepo(t)
	prof := loadProfile(t, fsys, "templated")
	r := New(Options{})
	for round := range 2 {
		for i := range 5 {
			c := prodCluster()
			c.Name = fmt.Sprintf("c%d", i)
			if _, err := r.Render(context.Background(), Request{FS: fsys, Revision: "rev1", Profile: prof, Cluster: c}); err != nil {
				t.Fatal(err)
			}
		}
		hits, misses := r.CacheStats()
		if want := uint64(5 * round); misses != 5 || hits != want {
			t.Errorf("round %d: hits %d misses %d, want %d and 5", round, hits, misses, want)
		}
	}
}

func TestCacheKeyFollowsContent(t *testing.T) {
	fsys := memRepo(t)
	prof := loadProfile(t, fsys, "fleet")
	r := New(Options{})
	render := func(rev string) *Result {
		t.Helper()
		res, err := r.Render(context.Background(), Request{FS: fsys, Revision: rev, Profile: prof, Cluster: fleetCluster(2)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := render("rev1")
	fsys["addons/extras/priorityclass.yaml"].Data = []byte("# not read by the fleet profile\n")
	if again := render("rev2"); again.Key != first.Key {
		t.Errorf("a change outside the profile's paths changed the key")
	}
	fsys["addons/app/base/deployment.yaml"].Data = append(fsys["addons/app/base/deployment.yaml"].Data, []byte("  minReadySeconds: 5\n")...)
	changed := render("rev3")
	if changed.Key == first.Key || changed.Hash == first.Hash {
		t.Errorf("a change in the kustomize base kept key or hash")
	}
	if _, misses := r.CacheStats(); misses != 2 {
		t.Errorf("%d misses, want 2", misses)
	}
	delete(fsys, "addons/app/components/monitoring/servicemonitor.yaml")
	if _, err := r.Render(context.Background(), Request{FS: fsys, Profile: prof, Cluster: fleetCluster(2)}); err == nil {
		t.Errorf("a deleted resource file still rendered from the cache (no revision given)")
	}
}

// TestCacheHitSharesObjects: hits, here for other clusters with the same
// inputs, return the same objects (no deep copy: the first hit decodes
// the stored render, the next ones share its objects) in a Result and
// slices of each caller's own.
func TestCacheHitSharesObjects(t *testing.T) {
	fsys := memRepo(t)
	r := New(Options{})
	prof := loadProfile(t, fsys, "fleet")
	mustRender(t, r, Request{FS: fsys, Revision: "rev1", Profile: prof, Cluster: fleetCluster(0)})
	first := mustRender(t, r, Request{FS: fsys, Revision: "rev1", Profile: prof, Cluster: fleetCluster(3)}) // same tier
	second := mustRender(t, r, Request{FS: fsys, Revision: "rev1", Profile: prof, Cluster: fleetCluster(6)})
	if hits, misses := r.CacheStats(); hits != 2 || misses != 1 {
		t.Fatalf("hits %d misses %d, want 2 and 1", hits, misses)
	}
	if first == second || &first.Steps[0] == &second.Steps[0] || &first.Steps[0].Objects[0] == &second.Steps[0].Objects[0] {
		t.Error("two requests got the same Result or slices")
	}
	n := 0
	for i, st := range first.Steps {
		for j, o := range st.Objects {
			n++
			if o.Unstructured != second.Steps[i].Objects[j].Unstructured {
				t.Errorf("step %d object %d (%s) was copied on a hit", i, j, o.GetName())
			}
		}
	}
	if len(first.Steps) < 2 || n < 3 {
		t.Fatalf("fixture too small: %d steps, %d objects", len(first.Steps), n)
	}
}

// TestCacheKeepsResultsEncodedOutOfUse: a fresh render is stored encoded
// only; a hit decodes it, the same objects as a render without the cache
// (value for value, numbers' types included), and keeps it decoded while
// served within hotFor; out of use, the next hit decodes it afresh.
func TestCacheKeepsResultsEncodedOutOfUse(t *testing.T) {
	fsys := memRepo(t)
	r := New(Options{})
	req := Request{FS: fsys, Revision: "rev1", Profile: loadProfile(t, fsys, "fleet"), Cluster: fleetCluster(0)}
	want := mustRender(t, New(Options{CacheBytes: -1}), req)
	fresh := mustRender(t, r, req)
	if r.cache.hot.len() != 0 || r.cache.results.len() != 1 {
		t.Fatalf("%d hot, %d stored results after a render; want 0 and 1", r.cache.hot.len(), r.cache.results.len())
	}
	first := mustRender(t, r, req)
	second := mustRender(t, r, req)
	r.cache.hot.expire(time.Now().Add(time.Minute)) // as if hotFor had passed
	if r.cache.hot.len() != 0 {
		t.Fatalf("%d hot results after expiry", r.cache.hot.len())
	}
	third := mustRender(t, r, req)
	if hits, misses := r.CacheStats(); hits != 3 || misses != 1 {
		t.Fatalf("hits %d misses %d, want 3 and 1", hits, misses)
	}
	for name, res := range map[string]*Result{"fresh": fresh, "first hit": first, "after expiry": third} {
		if !reflect.DeepEqual(res, want) {
			t.Errorf("%s:\n%s\nwant:\n%s", name, dump(t, res), dump(t, want))
		}
	}
	obj := func(res *Result) any { return res.Steps[0].Objects[0].Unstructured }
	if obj(fresh) == obj(first) || obj(second) != obj(first) || obj(third) == obj(second) {
		t.Error("want the first hit and the one after expiry decoded afresh, the hit within hotFor shared")
	}
}

// TestCacheSweepsHotResultsWithoutLookups: a daemon between commits looks
// nothing up; its results still go back to their encoded form.
func TestCacheSweepsHotResultsWithoutLookups(t *testing.T) {
	fsys := memRepo(t)
	r := New(Options{})
	r.cache.hotFor = 20 * time.Millisecond
	prof := loadProfile(t, fsys, "fleet")
	for range 2 {
		mustRender(t, r, Request{FS: fsys, Revision: "rev1", Profile: prof, Cluster: fleetCluster(0)})
	}
	if r.cache.hot.len() == 0 {
		t.Fatal("no hot result after a hit")
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.cache.hot.len() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d results still decoded 10 s after their last use", r.cache.hot.len())
		}
		time.Sleep(time.Millisecond)
	}
	if n := r.cache.results.len(); n == 0 {
		t.Error("the stored results went with the hot ones")
	}
}

func TestLRUExpire(t *testing.T) {
	c := newLRU[int](100)
	c.put("old", 1, 1)
	c.put("new", 2, 1)
	c.items["old"].Value.(*lruEntry[int]).used = time.Now().Add(-time.Hour)
	c.expire(time.Now().Add(-time.Minute))
	if _, ok := c.get("old"); ok {
		t.Error("an entry last used before the cut stayed")
	}
	if _, ok := c.get("new"); !ok || c.size != 1 {
		t.Errorf("the entry used after the cut went (size %d)", c.size)
	}
}

// TestCallerChangesToItsResultSpareTheCache does to a result what a caller
// may (change the Result's fields; append to, reorder and replace elements
// of its slices; change a deep copy) and checks that the next hit returns
// what was cached.
func TestCallerChangesToItsResultSpareTheCache(t *testing.T) {
	fsys := memRepo(t)
	r := New(Options{})
	req := Request{FS: fsys, Revision: "rev1", Profile: loadProfile(t, fsys, "fleet"), Cluster: fleetCluster(0)}
	mustRender(t, r, req)
	mine := mustRender(t, r, req)                            // a hit: the decoded result the next hit shares
	want := mustRender(t, New(Options{CacheBytes: -1}), req) // shares nothing with r
	own := mine.DeepCopy()
	own.Steps[0].Objects[0].SetNamespace("changed")

	mine.Hash, mine.Key, mine.Profile = "changed", "changed", "changed"
	mine.Steps[0].Addon = "changed"
	objs := mine.Steps[0].Objects
	slices.Reverse(objs)
	objs[0] = Object{Unstructured: objs[0].DeepCopy(), Source: "changed"}
	objs[0].SetLabels(map[string]string{"changed": "yes"})
	mine.Steps[0].Objects = append(objs[:1], Object{Unstructured: objs[1].DeepCopy()}) // into the backing array
	mine.Steps = append(mine.Steps[:1], Step{Addon: "appended"})                       // likewise

	again := mustRender(t, r, req)
	if hits, _ := r.CacheStats(); hits != 2 {
		t.Fatalf("%d hits, want 2", hits)
	}
	if !reflect.DeepEqual(again, want) {
		t.Errorf("the cached result changed:\n%s\nwant:\n%s", dump(t, again), dump(t, want))
	}
}

func mustRender(t testing.TB, r *Renderer, req Request) *Result {
	t.Helper()
	res, err := r.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLRUBoundsCost(t *testing.T) {
	c := newLRU[int](100)
	for i := range 10 {
		c.put(fmt.Sprint(i), i, 30)
	}
	if c.len() != 3 || c.size != 90 {
		t.Errorf("len %d size %d, want 3 and 90", c.len(), c.size)
	}
	if _, ok := c.get("9"); !ok {
		t.Errorf("newest entry evicted")
	}
	if _, ok := c.get("0"); ok {
		t.Errorf("oldest entry kept")
	}
	c.put("big", 1, 101)
	if _, ok := c.get("big"); ok {
		t.Errorf("an entry larger than the bound was stored")
	}
}

func TestCacheDisabled(t *testing.T) {
	fsys := memRepo(t)
	req := Request{FS: fsys, Revision: "rev1", Profile: loadProfile(t, fsys, "plain"), Cluster: prodCluster()}
	r := New(Options{CacheBytes: -1})
	for range 2 {
		if _, err := r.Render(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if hits, misses := r.CacheStats(); hits != 0 || misses != 2 {
		t.Errorf("hits %d misses %d with the cache off, want 0 and 2", hits, misses)
	}
}

// TestConcurrentKustomize renders kustomize add-ons from many goroutines
// with the cache off; run with -race.
func TestConcurrentKustomize(t *testing.T) {
	fsys := memRepo(t)
	profiles := []*spec.Profile{loadProfile(t, fsys, "kustomize"), loadProfile(t, fsys, "overlays"), loadProfile(t, fsys, "fleet")}
	r := New(Options{CacheBytes: -1})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 6 {
				req := Request{FS: fsys, Profile: profiles[(g+i)%3], Cluster: fleetCluster(g*6 + i)}
				if _, err := r.Render(context.Background(), req); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
}

// TestCacheFailures: a broken revision costs one render per distinct
// input, and fixing the broken file renders again.
func TestCacheFailures(t *testing.T) {
	fsys := memRepo(t)
	prof := loadProfile(t, fsys, "broken-kustomize")
	r := New(Options{})
	var first error
	for i := range 50 {
		_, err := r.Render(context.Background(), Request{FS: fsys, Revision: "r1", Profile: prof, Cluster: fleetCluster(i)})
		if err == nil {
			t.Fatal("broken kustomization rendered")
		}
		if first == nil {
			first = err
		} else if err.Error() != first.Error() {
			t.Errorf("cached failure %q differs from %q", err, first)
		}
	}
	if hits, misses := r.CacheStats(); hits != 49 || misses != 1 {
		t.Errorf("hits %d misses %d, want 49 and 1", hits, misses)
	}
	fsys["addons/broken-kustomize/does-not-exist.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: now-exists}\n")}
	if _, err := r.Render(context.Background(), Request{FS: fsys, Revision: "r2", Profile: prof, Cluster: fleetCluster(0)}); err != nil {
		t.Errorf("after the fix: %v", err)
	}
}
