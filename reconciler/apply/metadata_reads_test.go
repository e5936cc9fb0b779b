package apply_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// readLog records the reads a client makes (watches left out), with
// whether each asked for metadata only.
type readLog struct {
	mu    sync.Mutex
	reads []read
}

type read struct {
	path     string
	metadata bool
}

func (l *readLog) wrap(_ string, rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && !strings.Contains(req.URL.RawQuery, "watch=true") {
			l.mu.Lock()
			l.reads = append(l.reads, read{path: req.URL.Path,
				metadata: strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata")})
			l.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (l *readLog) reset() []read {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.reads
	l.reads = nil
	return out
}

// On a converged cluster whose watches run, the drift check lists each
// tracked kind's metadata and reads no object's body, objects opted out of
// drift detection included.
func TestDriftCheckReadsMetadataOnly(t *testing.T) {
	ns := "drift-meta"
	log := &readLog{}
	opts := testOptions()
	opts.Client.WrapTransport = log.wrap
	c := target(t, newManager(t, opts), mainCluster)
	objs := []*unstructured.Unstructured{namespace(ns)}
	for i := range 6 {
		objs = append(objs, configMap(ns, fmt.Sprintf("cm-%d", i), nil))
		optOut := configMap(ns, fmt.Sprintf("opted-out-%d", i), nil)
		optOut.SetAnnotations(map[string]string{apply.AnnotationDriftDetection: apply.Disabled})
		objs = append(objs, optOut)
	}
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "drift-meta", RenderHash: "h1",
		SyncMode: spec.SyncModeContinuousWithDriftDetection, Steps: []apply.Step{step("a", objs...)}}))
	testenv.WaitFor(t, 10*time.Second, "drift watches listed", func() bool {
		return c.Drift().Tracked("drift-meta") && c.Drift().HasSynced()
	})
	log.reset()
	if events, err := c.DriftCheck(t.Context()); err != nil || len(events) != 0 {
		t.Fatalf("DriftCheck on a converged cluster: %v, %v", events, err)
	}
	reads := log.reset()
	if len(reads) != 2 {
		t.Fatalf("converged DriftCheck made %d reads, want 2 (one list per kind): %v", len(reads), reads)
	}
	for _, r := range reads {
		if !r.metadata {
			t.Errorf("converged DriftCheck read %s in full, want its metadata only", r.path)
		}
	}
}

// Listing inventories reads only their metadata while none changed, and
// reads them in full again when one changed or went away, so what it
// returns is always what the cluster holds.
func TestInventoriesReadMetadataWhenUnchanged(t *testing.T) {
	ns := "inv-meta"
	log := &readLog{}
	opts := testOptions()
	opts.Client.WrapTransport = log.wrap
	c, k := target(t, newManager(t, opts), mainCluster), kube(t, mainCluster)
	req := func(profile, hash string) apply.Request {
		return apply.Request{Profile: profile, RenderHash: hash,
			Steps: []apply.Step{step("a", configMap(ns, profile, map[string]string{"v": hash}))}}
	}
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "inv-meta-ns", RenderHash: "h1",
		Steps: []apply.Step{step("a", namespace(ns))}}))
	mustApplied(t, c.Apply(t.Context(), req("inv-meta-a", "h1")))
	mustApplied(t, c.Apply(t.Context(), req("inv-meta-b", "h1")))

	list := func(want map[string]string) []read {
		t.Helper()
		log.reset()
		invs, err := c.Inventories(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, inv := range invs {
			if strings.HasPrefix(inv.Profile, "inv-meta-") && inv.Profile != "inv-meta-ns" {
				got[inv.Profile] = inv.RenderHash
			}
		}
		if len(got) != len(want) {
			t.Fatalf("inventories %v, want %v", got, want)
		}
		for p, h := range want {
			if got[p] != h {
				t.Fatalf("inventories %v, want %v", got, want)
			}
		}
		return log.reset()
	}
	both := map[string]string{"inv-meta-a": "h1", "inv-meta-b": "h1"}
	list(both) // fills the cache
	if reads := list(both); len(reads) != 1 || !reads[0].metadata {
		t.Errorf("listing unchanged inventories made reads %v, want one list of their metadata", reads)
	}

	// This Manager's own write is cached as it wrote it.
	mustApplied(t, c.Apply(t.Context(), req("inv-meta-b", "h2")))
	if reads := list(map[string]string{"inv-meta-a": "h1", "inv-meta-b": "h2"}); len(reads) != 1 || !reads[0].metadata {
		t.Errorf("listing after this Manager's own write made reads %v, want one list of their metadata", reads)
	}
	// Another writer's change (another replica, a restarted daemon) is read.
	other := target(t, newManager(t, testOptions()), mainCluster)
	mustApplied(t, other.Apply(t.Context(), req("inv-meta-b", "h3")))
	if reads := list(map[string]string{"inv-meta-a": "h1", "inv-meta-b": "h3"}); len(reads) != 2 || reads[1].metadata {
		t.Errorf("listing after another writer's change made reads %v, want a metadata list and a full one", reads)
	}

	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = apply.InventoryNamespace, apply.InventoryName("inv-meta-b")
	if err := k.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	list(map[string]string{"inv-meta-a": "h1"})
}

// An inventory this Manager wrote is known to ownership without a read:
// an object a pass added to profile a's inventory, then stripped of its
// labels out of band, is still a's, and another profile rendering it is in
// conflict with a (the listing served from the cache indexes what a's
// write holds).
func TestOwnWrittenInventoryClaimsItsObjects(t *testing.T) {
	ns := "inv-own"
	c, k := target(t, newManager(t, testOptions()), mainCluster), kube(t, mainCluster)
	mustApplied(t, c.Apply(t.Context(), apply.Request{Profile: "inv-own-ns", RenderHash: "h1",
		Steps: []apply.Step{step("a", namespace(ns))}}))
	a := apply.Request{Profile: "inv-own-a", RenderHash: "h1", Steps: []apply.Step{step("a", configMap(ns, "first", nil))}}
	mustApplied(t, c.Apply(t.Context(), a))
	if _, err := c.Inventories(t.Context()); err != nil { // fills the cache
		t.Fatal(err)
	}
	a.RenderHash = "h2"
	a.Steps = []apply.Step{step("a", configMap(ns, "first", nil), configMap(ns, "added", nil))}
	mustApplied(t, c.Apply(t.Context(), a))
	mergePatch(t, k, getCM(t, k, ns, "added"), `{"metadata":{"labels":{"regatta.dev/profile":null,"regatta.dev/addon":null}}}`)
	if _, err := c.Inventories(t.Context()); err != nil {
		t.Fatal(err)
	}
	res := c.Apply(t.Context(), apply.Request{Profile: "inv-own-b", RenderHash: "b1",
		Steps: []apply.Step{step("a", configMap(ns, "added", map[string]string{"v": "grab"}))}})
	if res.State != apply.StateConflict || !strings.Contains(res.Error, "owned by profile inv-own-a") {
		t.Errorf("b took an unlabelled object a's inventory holds: %s %s", res.State, res.Error)
	}
}
