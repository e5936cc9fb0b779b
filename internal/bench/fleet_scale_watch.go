package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// markerWatch records, as the API servers' admin, when each logical
// cluster's marker ConfigMaps first showed each generation: one watch per
// API server over every namespace, so the bench itself adds N-independent
// load.
type markerWatch struct {
	mu   sync.Mutex
	seen map[markerKey]time.Time
	errs []error
}

// markerKey is a marker at a generation in a namespace.
type markerKey struct {
	Namespace, Profile, Generation string
}

// watchMarkers starts a watch on each server until ctx ends.
func watchMarkers(ctx context.Context, servers []*testenv.Cluster) (*markerWatch, error) {
	mw := &markerWatch{seen: map[markerKey]time.Time{}}
	for _, s := range servers {
		cfg := s.RESTConfig()
		cfg.QPS, cfg.Burst = 100, 200
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		go mw.run(ctx, cs)
	}
	return mw, nil
}

// run lists and watches the markers of one server, listing again when a
// watch ends.
func (mw *markerWatch) run(ctx context.Context, cs kubernetes.Interface) {
	opts := metav1.ListOptions{LabelSelector: fleetMarkerLabel + "=true"}
	for ctx.Err() == nil {
		list, err := cs.CoreV1().ConfigMaps("").List(ctx, opts)
		if err != nil {
			mw.fail(err)
			_ = sleepCtx(ctx, time.Second)
			continue
		}
		for i := range list.Items {
			mw.record(&list.Items[i])
		}
		w, err := cs.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{LabelSelector: opts.LabelSelector,
			ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
		if err != nil {
			mw.fail(err)
			continue
		}
		for ev := range w.ResultChan() {
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				mw.record(cm)
			}
		}
		w.Stop()
	}
}

func (mw *markerWatch) fail(err error) {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if len(mw.errs) < 10 {
		mw.errs = append(mw.errs, err)
	}
}

// record notes the first time a marker showed its generation.
func (mw *markerWatch) record(cm *corev1.ConfigMap) {
	k := markerKey{Namespace: cm.Namespace, Profile: strings.TrimSuffix(cm.Name, fleetMarkerSuffix), Generation: cm.Data["generation"]}
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if _, ok := mw.seen[k]; !ok {
		mw.seen[k] = time.Now()
	}
}

// times returns, for each cluster whose markers of every profile show
// generation gen (profile -> generation), the time from start to the last
// of them.
func (mw *markerWatch) times(clusters []string, gens map[string]string, start time.Time) []time.Duration {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	var out []time.Duration
	for _, c := range clusters {
		last, ok := clusterTime(mw.seen, LogicalNamespace(c), gens)
		if ok {
			out = append(out, max(0, last.Sub(start)))
		}
	}
	return out
}

// clusterTime is the time the last of a namespace's markers reached its
// generation.
func clusterTime(seen map[markerKey]time.Time, ns string, gens map[string]string) (time.Time, bool) {
	var last time.Time
	for p, g := range gens {
		t, ok := seen[markerKey{Namespace: ns, Profile: p, Generation: g}]
		if !ok {
			return time.Time{}, false
		}
		if t.After(last) {
			last = t
		}
	}
	return last, true
}

// wait polls until every cluster has gens or within passes; it returns
// the per-cluster times either way, and an error naming the clusters
// missing.
func (mw *markerWatch) wait(ctx context.Context, clusters []string, gens map[string]string, start time.Time, within time.Duration) ([]time.Duration, error) {
	deadline := time.Now().Add(within)
	for {
		ts := mw.times(clusters, gens, start)
		if len(ts) == len(clusters) {
			return ts, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			mw.mu.Lock()
			errs := mw.errs
			mw.mu.Unlock()
			return ts, fmt.Errorf("%d of %d clusters reached %v within %s (watch errors: %v)", len(ts), len(clusters), gens, within, errs)
		}
		_ = sleepCtx(ctx, 100*time.Millisecond)
	}
}
