package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
)

// LimitInFlight is the minimal program's requests in flight per cluster.
const LimitInFlight = 16

// Limit is the API servers' own limit: a minimal program that
// server-side-applies already rendered objects, Namespaces first, all
// clusters at once and LimitInFlight requests per cluster, and does
// nothing else (no dry-run, inventory, labels or health checks).
type Limit struct {
	// Objects are the rendered objects by cluster name.
	Objects     map[string][]*unstructured.Unstructured
	Kubeconfigs map[string][]byte
	// Bookkeeping, when set, adds what regatta's guarantees need (see
	// Bookkeeping): the floor of regatta's rollout, not the servers' limit.
	Bookkeeping *Bookkeeping
}

// Run applies everything and returns the wall time, client creation
// included.
func (l Limit) Run(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	errs := make(chan error, len(l.Objects))
	var wg sync.WaitGroup
	for name, objs := range l.Objects {
		wg.Go(func() { errs <- l.applyCluster(ctx, name, objs) })
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return took, errors.Join(all...)
}

// RunAvailable is the minimal program of the health phase: it applies
// everything as Run does while poll, started at the same instant, waits for
// every Deployment to be Available. It returns the apply's wall time and
// when the poll saw the last cluster done.
func (l Limit) RunAvailable(ctx context.Context, poll AvailablePoll) (applied time.Duration, avail AvailableTimes, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	polled := poll.Start(ctx, time.Now())
	applied, err = l.Run(ctx)
	if err != nil {
		return applied, avail, err
	}
	r := <-polled
	return applied, r.Times, r.Err
}

func (l Limit) applyCluster(ctx context.Context, cluster string, objs []*unstructured.Unstructured) error {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(l.Kubeconfigs[cluster])
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 300, 600 // regatta's per-cluster defaults
	k, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	var namespaces, rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			namespaces = append(namespaces, o)
		} else {
			rest = append(rest, o)
		}
	}
	if l.Bookkeeping != nil {
		return l.Bookkeeping.applyCluster(ctx, k, cfg, cluster, namespaces, rest)
	}
	if err := applyAll(ctx, k, namespaces); err != nil {
		return err
	}
	return applyAll(ctx, k, rest)
}

// applyAll applies objects with LimitInFlight requests in flight.
func applyAll(ctx context.Context, k client.Client, objs []*unstructured.Unstructured) error {
	work := make(chan *unstructured.Unstructured)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range LimitInFlight {
		wg.Go(func() {
			for o := range work {
				err := k.Patch(ctx, o, client.Apply, client.FieldOwner("minimal"), client.ForceOwnership)
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err))
					mu.Unlock()
				}
			}
		})
	}
	for _, o := range objs {
		work <- o
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

// RenderObjects renders a fleet (outside any timing) for the minimal
// program: every object of every pair, by cluster. The objects are copies:
// rendered objects are shared (clusters with the same inputs get the same
// pointers) and read-only, and applying writes the server's answer into
// the object it sends.
func RenderObjects(ctx context.Context, fsys fs.FS, helmCacheDir string) (map[string][]*unstructured.Unstructured, error) {
	r := render.New(render.Options{Helm: helm.New(helm.Options{CacheDir: helmCacheDir})})
	out := map[string][]*unstructured.Unstructured{}
	var mu sync.Mutex
	_, err := PlanFleet(ctx, fsys, "", r, 2, func(cluster string, res []*render.Result) {
		var objs []*unstructured.Unstructured
		for _, x := range res {
			for _, o := range x.Objects() {
				objs = append(objs, o.DeepCopy())
			}
		}
		mu.Lock()
		out[cluster] = objs
		mu.Unlock()
	})
	return out, err
}
