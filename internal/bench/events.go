package bench

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Methods of the event step of the rollout phase (issue 13).
const (
	// MethodEventApplied: a matching Service created, to its instance's
	// ConfigMap applied; one sample per cluster.
	MethodEventApplied = "event-applied"
	// MethodEventWithdrawn: the Service deleted, to the ConfigMap gone.
	MethodEventWithdrawn = "event-withdrawn"
	// MethodEventBurst: 1,000 matching ConfigMaps created at once on one
	// cluster, to all 1,000 instances applied; Requests holds the number
	// of apply requests of the pair (key "pair-applies").
	MethodEventBurst = "event-burst"
)

const (
	eventNS      = "bench-events"
	burstNS      = "bench-burst"
	burstCopyNS  = "bench-burst-out"
	eventProfile = "bench-events"
	burstProfile = "bench-burst"
)

func eventFiles(first string) map[string]string {
	return map[string]string{
		"events/bench-svc.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: bench-svc}\nspec:\n  resourceSelectors:\n" +
			"  - {version: v1, kind: Service, namespace: " + eventNS + ", labelFilters: [{key: bench, operation: Equal, value: event}]}\n",
		"profiles/bench-events.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + eventProfile + "}\nspec:\n" +
			"  clusterSelector: {matchExpressions: [{key: env, operator: Exists}]}\n  eventTrigger: {eventSourceName: bench-svc, oneForEvent: true}\n" +
			"  addons:\n  - name: describe\n    template: true\n    manifests: {path: bench-events}\n",
		"bench-events/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"svc-{{ .Event.Resource.metadata.name }}\", namespace: " + eventNS + "}\n" +
			"data: {service: \"{{ .Event.Resource.metadata.name }}\", instance: \"{{ .Event.Name }}\"}\n",
		"events/bench-burst.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: bench-burst}\nspec:\n  resourceSelectors:\n" +
			"  - {version: v1, kind: ConfigMap, namespace: " + burstNS + ", labelFilters: [{key: bench, operation: Equal, value: burst}]}\n",
		"profiles/bench-burst.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + burstProfile + "}\nspec:\n" +
			"  clusterRefs: [" + first + "]\n  eventTrigger: {eventSourceName: bench-burst, oneForEvent: true, maxInstances: 2000}\n" +
			"  addons:\n  - name: copies\n    template: true\n    manifests: {path: bench-burst}\n",
		"bench-burst/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"copy-{{ .Event.Name }}\", namespace: " + burstCopyNS + ", labels: {bench: copy}}\n" +
			"data: {of: \"{{ .Event.Resource.metadata.name }}\"}\n",
	}
}

// events commits two event profiles and times, on every cluster at once,
// a matching Service to its instance applied and its deletion to the
// instance withdrawn; then a burst of 1,000 matching resources on the
// first cluster, counting the pair's apply requests.
func (r *rolloutRound) events(ctx context.Context, g *GitRepo, d *Daemon, f Fleet) ([]Sample, error) {
	stop := d.drain(ctx)
	defer stop()
	first := f.Clusters[0].Name
	clients := map[string]*kubernetes.Clientset{}
	for _, c := range f.Clusters {
		cfg := r.cs.Cluster(c.Name).RESTConfig()
		cfg.QPS, cfg.Burst = 2000, 2000
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		clients[c.Name] = cs
		for _, ns := range []string{eventNS, burstNS, burstCopyNS} {
			if err := createNS(ctx, cs, ns); err != nil {
				return nil, err
			}
		}
	}
	if _, err := g.Commit(ctx, "event profiles", eventFiles(first)); err != nil {
		return nil, err
	}
	d.Trigger()
	if _, err := eventRoundTrip(ctx, clients, "warmup"); err != nil {
		return nil, fmt.Errorf("the event profile is not in force: %w", err)
	}
	out, err := eventRoundTrip(ctx, clients, "timed")
	if err != nil {
		return out, err
	}
	burst, err := r.burst(ctx, d, clients[first], first)
	return append(out, burst), err
}

// drain takes the daemon's settled passes, which nothing waits for here.
func (d *Daemon) drain(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-d.passes:
			}
		}
	}()
	return cancel
}

func createNS(ctx context.Context, cs *kubernetes.Clientset, name string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// eventRoundTrip creates Service name on every cluster at once, waits for
// its ConfigMap, deletes it and waits for the ConfigMap to go.
func eventRoundTrip(ctx context.Context, clients map[string]*kubernetes.Clientset, name string) ([]Sample, error) {
	var mu sync.Mutex
	var out []Sample
	g, ctx := errgroup.WithContext(ctx)
	for cluster, cs := range clients {
		g.Go(func() error {
			applied, withdrawn, err := serviceRoundTrip(ctx, cs, name)
			if err != nil {
				return fmt.Errorf("cluster %s: %w", cluster, err)
			}
			mu.Lock()
			out = append(out, Sample{Method: MethodEventApplied, Secs: applied}, Sample{Method: MethodEventWithdrawn, Secs: withdrawn})
			mu.Unlock()
			return nil
		})
	}
	return out, g.Wait()
}

func serviceRoundTrip(ctx context.Context, cs *kubernetes.Clientset, name string) (float64, float64, error) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: eventNS, Labels: map[string]string{"bench": "event"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}}}
	start := time.Now()
	if _, err := cs.CoreV1().Services(eventNS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return 0, 0, err
	}
	if err := pollCM(ctx, cs, "svc-"+name, true); err != nil {
		return 0, 0, err
	}
	applied := time.Since(start).Seconds()
	start = time.Now()
	if err := cs.CoreV1().Services(eventNS).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return 0, 0, err
	}
	if err := pollCM(ctx, cs, "svc-"+name, false); err != nil {
		return 0, 0, err
	}
	return applied, time.Since(start).Seconds(), nil
}

// pollCM polls every 20 ms, up to 2 minutes, until the ConfigMap exists
// (or is gone).
func pollCM(ctx context.Context, cs *kubernetes.Clientset, name string, exists bool) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		_, err := cs.CoreV1().ConfigMaps(eventNS).Get(ctx, name, metav1.GetOptions{})
		if err == nil == exists {
			return nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("ConfigMap %s/%s exists=%v not reached within 2m", eventNS, name, exists)
}

// burst creates 1,000 matching ConfigMaps at once (8 in flight) and times
// them to all their copies applied.
func (r *rolloutRound) burst(ctx context.Context, d *Daemon, cs *kubernetes.Clientset, cluster string) (Sample, error) {
	before := d.pairApplies(cluster, burstProfile)
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range 1000 {
		g.Go(func() error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("src-%04d", i), Namespace: burstNS,
				Labels: map[string]string{"bench": "burst"}}}
			_, err := cs.CoreV1().ConfigMaps(burstNS).Create(gctx, cm, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return Sample{Method: MethodEventBurst}, err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		l, err := cs.CoreV1().ConfigMaps(burstCopyNS).List(ctx, metav1.ListOptions{LabelSelector: "bench=copy"})
		if err == nil && len(l.Items) == 1000 {
			n := d.pairApplies(cluster, burstProfile) - before
			return Sample{Method: MethodEventBurst, Secs: time.Since(start).Seconds(),
				Requests: []RequestRow{{RequestKey: RequestKey{Verb: "pair-applies"}, Count: n}}}, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return Sample{Method: MethodEventBurst}, fmt.Errorf("1,000 burst copies not applied within 5m")
}

// pairApplies is the daemon's count of apply requests of one pair.
func (d *Daemon) pairApplies(cluster, profile string) float64 {
	return testutil.ToFloat64(d.d.Metrics().Applies.WithLabelValues(cluster, profile))
}

// eventTargets: event-driven add-ons (issue 13).
func eventTargets(r *Results) []target {
	how := "rollout phase (§1), event-*"
	applied, gone := Quantile(r.Secs(MethodEventApplied), .5), Quantile(r.Secs(MethodEventWithdrawn), .5)
	burst, reqs := Quantile(r.Secs(MethodEventBurst), .5), math.NaN()
	for _, s := range r.Samples {
		if s.Method == MethodEventBurst && s.Err == "" && len(s.Requests) > 0 {
			reqs = math.Max(s.Requests[0].Count, zeroIfNaN(reqs))
		}
	}
	ts := []target{
		{name: "event to applied < 2 s p50", how: how, figure: secs(applied) + " p50"},
		{name: "resource gone to withdrawn < 2 s p50", how: how, figure: secs(gone) + " p50"},
		{name: "a burst of 1,000 matching resources is batched into few reconciliations", how: how,
			figure: fmt.Sprintf("%s to all applied, %s apply requests of the pair at most", secs(burst), count(reqs))},
	}
	if !math.IsNaN(applied) {
		ts[0].met = met(applied < 2)
	}
	if !math.IsNaN(gone) {
		ts[1].met = met(gone < 2)
	}
	if !math.IsNaN(reqs) {
		ts[2].met = met(reqs <= 20)
	}
	return ts
}

func zeroIfNaN(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

func count(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprint(x)
}
