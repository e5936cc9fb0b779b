package apply_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
)

// streamRewriter counts a client's lists and watches of one collection
// and rewrites the query of its watches (the rewrite sees the watch's
// number, from 1); answer, when set, answers a watch in the server's
// place when it returns a response.
type streamRewriter struct {
	path    string
	rewrite func(n int, q map[string][]string)
	answer  func(n int, req *http.Request) *http.Response
	mu      sync.Mutex
	lists   int
	watches int
}

func (s *streamRewriter) wrap(_ string, rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if !strings.HasSuffix(req.URL.Path, s.path) {
			return rt.RoundTrip(req)
		}
		q := req.URL.Query()
		s.mu.Lock()
		var answer *http.Response
		if q.Get("watch") == "true" {
			s.watches++
			if s.rewrite != nil {
				s.rewrite(s.watches, q)
			}
			if s.answer != nil {
				answer = s.answer(s.watches, req)
			}
		} else {
			s.lists++
		}
		s.mu.Unlock()
		if answer != nil {
			return answer, nil
		}
		req = req.Clone(req.Context())
		req.URL.RawQuery = q.Encode()
		return rt.RoundTrip(req)
	})
}

func (s *streamRewriter) counts() (lists, watches int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists, s.watches
}

// startStreamInformer runs an informer of ns's labelled ConfigMaps over a
// client whose watches rw rewrites.
func startStreamInformer(t *testing.T, ns string, rw *streamRewriter) (*seen, *apply.InformerLease) {
	t.Helper()
	kc := kube(t, mainCluster)
	if err := kc.Create(context.Background(), namespace(ns)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kc.Delete(context.Background(), namespace(ns)) })
	rw.path = "/namespaces/" + ns + "/configmaps"
	opts := testOptions().Client
	opts.WrapTransport = rw.wrap
	cl, err := apply.NewClientForConfig(mainCluster, env.Cluster(mainCluster).RESTConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	key := apply.InformerKey{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Namespace: ns, LabelSelector: "share=yes", View: "test"}
	s := &seen{names: map[string]bool{}}
	lease, err := cl.Informers().Acquire(key, nil, s.handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lease.Release)
	testenv.WaitFor(t, 10*time.Second, "the informer synced", lease.HasSynced)
	return s, lease
}

// TestInformerWatchesAgainWhereTheServerEndedIt: the API server ends each
// watch after a second (timeoutSeconds 1); the informer watches again
// from where the last one was, without listing again, and misses no
// object created in between.
func TestInformerWatchesAgainWhereTheServerEndedIt(t *testing.T) {
	ns := "informer-rewatch"
	rw := &streamRewriter{rewrite: func(_ int, q map[string][]string) { q["timeoutSeconds"] = []string{"1"} }}
	s, lease := startStreamInformer(t, ns, rw)
	kc := kube(t, mainCluster)
	for i := range 4 {
		_, before := rw.counts()
		name := fmt.Sprintf("cm-%d", i)
		if err := kc.Create(context.Background(), labelled(configMap(ns, name, nil))); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 10*time.Second, name+" seen", func() bool { return s.has(name) })
		// Wait for the watch to end and another to start before the next.
		testenv.WaitFor(t, 10*time.Second, "another watch", func() bool { _, w := rw.counts(); return w > before })
	}
	lists, watches := rw.counts()
	if lists != 1 || watches < 4 {
		t.Errorf("%d lists and %d watches, want 1 list and at least 4 watches", lists, watches)
	}
	if n := len(lease.Informer.List()); n != 4 {
		t.Errorf("the informer holds %d objects, want 4", n)
	}
	if err := lease.Informer.Err(); err != nil {
		t.Errorf("the informer reports %v after watches the server ended", err)
	}
}

// expiredFrame is the frame a kube-apiserver sends on a watch whose
// resourceVersion its history no longer holds (etcd compacted it: hours
// of a test server's life, so the test sends it in the server's place).
const expiredFrame = `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
	`"message":"too old resource version: 1 (4242)","reason":"Expired","code":410}}` + "\n"

// TestInformerListsAgainWhenTheVersionIsGone: the informer's first watch
// is answered with the server's 410 Expired frame; the informer lists
// again and goes on watching the real server, and an object created after
// that is in its cache.
func TestInformerListsAgainWhenTheVersionIsGone(t *testing.T) {
	ns := "informer-gone"
	kc := kube(t, mainCluster)
	rw := &streamRewriter{answer: func(n int, req *http.Request) *http.Response {
		if n != 1 {
			return nil
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(expiredFrame)), Request: req}
	}}
	s, lease := startStreamInformer(t, ns, rw)
	testenv.WaitFor(t, 10*time.Second, "a second list", func() bool { l, _ := rw.counts(); return l >= 2 })
	testenv.WaitFor(t, 10*time.Second, "a second watch", func() bool { _, w := rw.counts(); return w >= 2 })
	if err := kc.Create(context.Background(), labelled(configMap(ns, "later", nil))); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the object created after the relist seen", func() bool { return s.has("later") })
	lists, watches := rw.counts()
	if lists != 2 || watches != 2 {
		t.Errorf("%d lists and %d watches, want 2 and 2 (list, expired watch, list, watch)", lists, watches)
	}
	if n := len(lease.Informer.List()); n != 1 {
		t.Errorf("the informer holds %d objects, want 1", n)
	}
}
