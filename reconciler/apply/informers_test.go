package apply_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
)

// pathCounter counts the requests of a cluster client to one path.
type pathCounter struct {
	path string
	mu   sync.Mutex
	n    int
	log  []string
}

func (pc *pathCounter) wrap(_ string, rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if strings.HasSuffix(req.URL.Path, pc.path) {
			pc.mu.Lock()
			pc.n++
			pc.log = append(pc.log, req.URL.RawQuery)
			pc.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (pc *pathCounter) queries() []string {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return append([]string(nil), pc.log...)
}

func (pc *pathCounter) count() int {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.n
}

// seen is an event handler that records the names of the objects added.
type seen struct {
	mu    sync.Mutex
	names map[string]bool
}

func (s *seen) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if o, ok := obj.(interface{ GetName() string }); ok {
			s.mu.Lock()
			s.names[o.GetName()] = true
			s.mu.Unlock()
		}
	}}
}

func (s *seen) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[name]
}

// TestSharedInformersOneWatchPerKey: two users of one key get one
// informer and the API server one list-and-watch; a user with another
// selector gets its own; releasing one user keeps the other's informer
// running and delivering, and the last release stops it.
func TestSharedInformersOneWatchPerKey(t *testing.T) {
	ns := "shared-informers"
	kc := kube(t, mainCluster)
	if err := kc.Create(context.Background(), namespace(ns)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kc.Delete(context.Background(), namespace(ns)) })
	counter := &pathCounter{path: "/namespaces/" + ns + "/configmaps"}
	opts := testOptions().Client
	opts.WrapTransport = counter.wrap
	cl, err := apply.NewClientForConfig(mainCluster, env.Cluster(mainCluster).RESTConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	reg := cl.Informers()
	key := apply.InformerKey{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Namespace: ns, LabelSelector: "share=yes", View: "test"}
	a, b := &seen{names: map[string]bool{}}, &seen{names: map[string]bool{}}
	la, err := reg.Acquire(key, nil, a.handler())
	if err != nil {
		t.Fatal(err)
	}
	defer la.Release()
	testenv.WaitFor(t, 10*time.Second, "the first user synced", la.HasSynced)
	requests := counter.count()
	lb, err := reg.Acquire(key, nil, b.handler())
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Release()
	testenv.WaitFor(t, 10*time.Second, "the second user synced", lb.HasSynced)
	if la.Informer != lb.Informer || reg.Started() != 1 || reg.Running() != 1 {
		t.Fatalf("two users of one key: started %d, running %d, same informer %v", reg.Started(), reg.Running(), la.Informer == lb.Informer)
	}
	// The second user made no request: over a bounded window, none comes.
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if n := counter.count(); n != requests {
			t.Fatalf("the second user of the key made %d requests to the API server", n-requests)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// client-go tries a streaming list (a watch with sendInitialEvents)
	// first, then lists and watches.
	if requests > 3 {
		t.Errorf("one informer made %d requests (streaming list, list and watch at most): %q", requests, counter.queries())
	}

	other := key
	other.LabelSelector = "share=no"
	lc, err := reg.Acquire(other, nil, cache.ResourceEventHandlerFuncs{})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Started() != 2 || reg.Running() != 2 {
		t.Errorf("another selector: started %d, running %d, want 2 and 2", reg.Started(), reg.Running())
	}
	lc.Release()

	if err := kc.Create(context.Background(), labelled(configMap(ns, "before", nil))); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "both users told of the object", func() bool { return a.has("before") && b.has("before") })
	la.Release()
	la.Release() // twice is harmless
	if reg.Running() != 1 {
		t.Fatalf("after one user released: %d running, want 1", reg.Running())
	}
	if err := kc.Create(context.Background(), labelled(configMap(ns, "after", nil))); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the remaining user told of a new object", func() bool { return b.has("after") })
	if a.has("after") {
		t.Error("a released user was still told")
	}
	if n := len(lb.Informer.List()); n != 2 {
		t.Errorf("the remaining informer holds %d objects, want 2", n)
	}
	lb.Release()
	if reg.Running() != 0 {
		t.Errorf("after the last release: %d running", reg.Running())
	}
}

func labelled[T interface{ SetLabels(map[string]string) }](o T) T {
	o.SetLabels(map[string]string{"share": "yes"})
	return o
}
