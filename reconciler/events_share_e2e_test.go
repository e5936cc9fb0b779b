package reconciler

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/events"
	"github.com/regatta-dev/regatta/spec"
)

// TestEventSourcesShareWatches: two event sources with the same selector
// on a cluster get one informer from the cluster client's shared registry;
// when one is no longer read, the other's watch runs on and still tells of
// new resources.
func TestEventSourcesShareWatches(t *testing.T) {
	createNamespace(t, "c36", "share")
	cl, err := apply.NewClientForConfig("c36", env.Cluster("c36").RESTConfig(), apply.DefaultClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	source := func(name string) *spec.EventSource {
		return &spec.EventSource{Metadata: spec.ObjectMeta{Name: name}, Spec: spec.EventSourceSpec{
			ResourceSelectors: []spec.ResourceSelector{{Version: "v1", Kind: "Service", Namespace: "share"}}}}
	}
	var mu sync.Mutex
	notified := map[string]int{}
	m := events.NewManager(events.Options{Batch: 10 * time.Millisecond, Notify: func(_, src string) {
		mu.Lock()
		notified[src]++
		mu.Unlock()
	}})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, b := source("a"), source("b")
	for _, src := range []*spec.EventSource{a, b} {
		if _, err := m.Matching(ctx, "c36", cl, src, nil); err != nil {
			t.Fatal(err)
		}
	}
	if reg := cl.Informers(); reg.Started() != 1 || reg.Running() != 1 || m.Watches() != 2 {
		t.Fatalf("two sources, one selector: %d informers started, %d running, %d watches", reg.Started(), reg.Running(), m.Watches())
	}
	m.Retain(func(_, src string) bool { return src == "b" })
	if cl.Informers().Running() != 1 || m.Watches() != 1 {
		t.Fatalf("after dropping source a: %d informers running, %d watches", cl.Informers().Running(), m.Watches())
	}
	mu.Lock()
	before := notified["b"]
	mu.Unlock()
	createService(t, "c36", "share", "late", nil, 80)
	// A notification may still be on its way from the watch's sync, so
	// wait for both: told of a change, and the Service in the cache.
	testenv.WaitFor(t, 10*time.Second, "source b told of the new Service, and matching it", func() bool {
		mu.Lock()
		told := notified["b"] > before
		mu.Unlock()
		objs, err := m.Matching(ctx, "c36", cl, b, nil)
		return told && err == nil && len(objs) == 1
	})
	m.Retain(func(string, string) bool { return false })
	if n := cl.Informers().Running(); n != 0 {
		t.Errorf("no source read: %d informers running", n)
	}
}
