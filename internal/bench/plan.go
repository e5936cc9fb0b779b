package bench

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"

	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// KubernetesVersion is the version simulated clusters report.
const KubernetesVersion = "v1.37.2"

// PlanStats sums up a full match and render of a fleet.
type PlanStats struct {
	Clusters, Pairs, Objects int
	Hits, Misses             uint64
}

// PlanFleet loads the repository, matches every cluster (facts from
// cluster.yaml only) and renders every pair through r's cache, workers
// clusters at a time. each, when set, gets every cluster's results; the
// results are dropped afterwards, as a pass drops them.
func PlanFleet(ctx context.Context, fsys fs.FS, revision string, r *render.Renderer, workers int,
	each func(cluster string, res []*render.Result)) (PlanStats, error) {
	repo, diags := spec.Load(fsys)
	if err := diags.Err(); err != nil {
		return PlanStats{}, err
	}
	return PlanRepo(ctx, repo, revision, r, workers, each)
}

// PlanRepo is PlanFleet on a loaded repository.
func PlanRepo(ctx context.Context, repo *spec.Repository, revision string, r *render.Renderer, workers int,
	each func(cluster string, res []*render.Result)) (PlanStats, error) {
	fsys := repo.FS
	var pairs, objects atomic.Int64
	var firstErr error
	var once sync.Once
	work := make(chan *spec.Cluster)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Go(func() {
			for c := range work {
				res, err := renderCluster(ctx, repo, fsys, revision, r, c)
				if err != nil {
					once.Do(func() { firstErr = err })
					continue
				}
				pairs.Add(int64(len(res)))
				for _, x := range res {
					objects.Add(int64(len(x.Objects())))
				}
				if each != nil {
					each(c.Metadata.Name, res)
				}
			}
		})
	}
	for _, c := range repo.Clusters {
		work <- c
	}
	close(work)
	wg.Wait()
	hits, misses := r.CacheStats()
	return PlanStats{Clusters: len(repo.Clusters), Pairs: int(pairs.Load()), Objects: int(objects.Load()),
		Hits: hits, Misses: misses}, firstErr
}

// renderCluster matches one cluster and renders its profiles in wave order.
func renderCluster(ctx context.Context, repo *spec.Repository, fsys fs.FS, revision string, r *render.Renderer,
	c *spec.Cluster) ([]*render.Result, error) {
	labels, _ := plan.EffectiveLabels(c.Metadata.Labels, nil)
	a := plan.Match(repo.Profiles, plan.Cluster{Name: c.Metadata.Name, Labels: labels})
	if a.Err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Metadata.Name, a.Err)
	}
	facts := render.FactsOf(c, labels, KubernetesVersion)
	var out []*render.Result
	for _, p := range a.Profiles() {
		res, err := r.Render(ctx, render.Request{FS: fsys, Revision: revision, Profile: p, Cluster: facts})
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.Metadata.Name, err)
		}
		out = append(out, res)
	}
	return out, nil
}
