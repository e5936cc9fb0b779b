package rolloute2e

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// readyKey is the annotation the profile's health check compares with
// data.v: the test plays the controller that marks a version ready.
const readyKey = "test.regatta.dev/ready"

// window is the time one cluster spent updating to one version: from the
// first watch event showing it to the moment the test marked it ready
// (zero while not marked).
type window struct {
	cluster, version string
	start, end       time.Time
}

// observer watches the ConfigMap "web" in every cluster, records when each
// version arrives, and marks a version ready after hold, except versions
// it is told to refuse (a failing health check).
type observer struct {
	t    *testing.T
	hold time.Duration

	mu      sync.Mutex
	refuse  map[string]bool
	windows map[string]*window // by cluster/version
	current map[string]string  // version on each cluster
}

func newObserver(t *testing.T, hold time.Duration) *observer {
	o := &observer{t: t, hold: hold, refuse: map[string]bool{}, windows: map[string]*window{}, current: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, c := range allClusters() {
		o.watch(ctx, c)
	}
	return o
}

func clientset(t *testing.T, cluster string) *kubernetes.Clientset {
	cs, err := kubernetes.NewForConfig(env.Cluster(cluster).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// watch follows the ConfigMaps of the default namespace of a cluster
// until ctx ends, re-watching when the API server ends a watch (a fresh
// API server's watch cache can refuse the first ones). It returns once
// the watch provably sees events: a probe ConfigMap it created arrived.
func (o *observer) watch(ctx context.Context, cluster string) {
	cs := clientset(o.t, cluster)
	ready := make(chan struct{})
	var once sync.Once
	go func() {
		rv := ""
		for ctx.Err() == nil {
			w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					rv = "" // an error: start over from now
					break
				}
				rv = cm.ResourceVersion
				switch cm.Name {
				case "probe":
					once.Do(func() { close(ready) })
				case "web":
					o.seen(ctx, cs, cluster, cm)
				}
			}
			w.Stop()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, probe, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		o.t.Fatal(err)
	}
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		o.t.Fatalf("%s: the watch never saw its probe", cluster)
	}
}

func (o *observer) seen(ctx context.Context, cs *kubernetes.Clientset, cluster string, cm *corev1.ConfigMap) {
	v := cm.Data["v"]
	o.mu.Lock()
	defer o.mu.Unlock()
	o.current[cluster] = v
	key := cluster + "/" + v
	if _, ok := o.windows[key]; ok || cm.Annotations[readyKey] == v {
		return
	}
	w := &window{cluster: cluster, version: v, start: time.Now()}
	o.windows[key] = w
	if o.refuse[v] {
		return
	}
	time.AfterFunc(o.hold, func() { o.markReady(ctx, cs, w) })
}

func (o *observer) markReady(ctx context.Context, cs *kubernetes.Clientset, w *window) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, readyKey, w.version)
	_, err := cs.CoreV1().ConfigMaps("default").Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "test-controller"})
	if err != nil && ctx.Err() == nil {
		o.t.Errorf("%s: mark %s ready: %v", w.cluster, w.version, err)
	}
	o.mu.Lock()
	w.end = time.Now()
	o.mu.Unlock()
}

func (o *observer) refuseVersion(v string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refuse[v] = true
}

// version returns the version on a cluster ("" when none).
func (o *observer) version(cluster string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.current[cluster]
}

// windowOf returns a copy of a cluster's window for a version.
func (o *observer) windowOf(cluster, version string) (window, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.windows[cluster+"/"+version]
	if !ok {
		return window{}, false
	}
	return *w, true
}

// everSaw reports whether any of the clusters ever held the version.
func (o *observer) everSaw(version string, clusters []string) []string {
	var out []string
	for _, c := range clusters {
		if _, ok := o.windowOf(c, version); ok {
			out = append(out, c)
		}
	}
	return out
}

// maxOverlap is the most windows of a version, among clusters, open at
// one moment.
func (o *observer) maxOverlap(version string, clusters []string) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, c := range clusters {
		w, ok := o.windowOf(c, version)
		if !ok {
			continue
		}
		end := w.end
		if end.IsZero() {
			end = time.Now()
		}
		edges = append(edges, edge{w.start, 1}, edge{end, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].delta < edges[j].delta
		}
		return edges[i].at.Before(edges[j].at)
	})
	open, most := 0, 0
	for _, e := range edges {
		open += e.delta
		most = max(most, open)
	}
	return most
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// holdsFor fails the test when cond stops holding within d: a negative
// proven over a bounded window.
func holdsFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !cond() {
			t.Fatalf("%s stopped holding", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
