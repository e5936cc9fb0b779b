package rolloute2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
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

// observer watches a ConfigMap of the default namespace (each test's
// profile has its own) in every cluster, records when each version
// arrives, and marks a version ready after hold, except versions it is
// told to refuse (a failing health check) or to hold until released.
type observer struct {
	t    *testing.T
	hold time.Duration
	name string

	mu      sync.Mutex
	refuse  map[string]bool
	held    map[string]bool    // by cluster/version, until release
	windows map[string]*window // by cluster/version
	current map[string]string  // version on each cluster
	clients map[string]*kubernetes.Clientset
	ctx     context.Context
}

func newObserver(t *testing.T, hold time.Duration) *observer { return newObserverOf(t, hold, "web") }

// newObserverOf watches the ConfigMap name.
func newObserverOf(t *testing.T, hold time.Duration, name string) *observer {
	o := &observer{
		t:       t,
		hold:    hold,
		name:    name,
		refuse:  map[string]bool{},
		held:    map[string]bool{},
		windows: map[string]*window{},
		current: map[string]string{},
		clients: map[string]*kubernetes.Clientset{},
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	o.ctx = ctx
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
	o.clients[cluster] = cs
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
				case "probe-" + o.name:
					once.Do(func() { close(ready) })
				case o.name:
					o.seen(ctx, cs, cluster, cm)
				}
			}
			w.Stop()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	// A probe of its own: a fresh watch shows no event of one created by
	// an earlier test's observer.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe-" + o.name, Namespace: "default"}}
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
	if o.refuse[v] || o.held[key] {
		return
	}
	time.AfterFunc(o.hold, func() { o.markReady(ctx, cs, w) })
}

func (o *observer) markReady(ctx context.Context, cs *kubernetes.Clientset, w *window) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, readyKey, w.version)
	_, err := cs.CoreV1().ConfigMaps("default").Patch(ctx, o.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "test-controller"})
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

// holdOn keeps the version from being marked ready on the clusters until
// release.
func (o *observer) holdOn(v string, clusters ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range clusters {
		o.held[c+"/"+v] = true
	}
}

// release ends holdOn and refuseVersion of a version: the clusters that
// hold it are marked ready now, later ones after the usual hold.
func (o *observer) release(v string) {
	o.mu.Lock()
	delete(o.refuse, v)
	var open []*window
	for key := range o.held {
		if strings.HasSuffix(key, "/"+v) {
			delete(o.held, key)
		}
	}
	for _, w := range o.windows {
		if w.version == v && w.end.IsZero() {
			open = append(open, w)
		}
	}
	o.mu.Unlock()
	for _, w := range open {
		o.markReady(o.ctx, o.clients[w.cluster], w)
	}
}

// done reports whether the version is applied and was marked ready on
// every one of the clusters.
func (o *observer) done(v string, clusters []string) bool {
	for _, c := range clusters {
		if w, ok := o.windowOf(c, v); !ok || w.end.IsZero() {
			return false
		}
	}
	return true
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
