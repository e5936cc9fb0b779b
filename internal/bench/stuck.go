package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// restart times a fresh daemon on the fleet the round's daemon applied and
// left unchanged: from its start to the pass that found every pair
// converged. Its write requests are in the sample's Requests.
func (r *rolloutRound) restart(ctx context.Context, g *GitRepo, rev string) (Sample, *Daemon, error) {
	logf, err := os.Create(filepath.Join(r.dir, "regatta", "restart.log"))
	if err != nil {
		return Sample{}, nil, err
	}
	defer logf.Close()
	before := r.requests(ctx)
	start := time.Now()
	d, err := StartDaemon(ctx, DaemonOptions{RepoURL: g.URL(), HelmCacheDir: filepath.Join(r.dir, "regatta", "helm"),
		Log: logf, StatusInterval: time.Second, Regatta: r.o.Bins.Regatta})
	if err != nil {
		return Sample{}, nil, err
	}
	p, err := d.WaitRevision(ctx, rev, 5*time.Minute)
	if err != nil {
		return Sample{}, d, err
	}
	return Sample{Method: MethodRestart, Secs: p.At.Sub(start).Seconds(), PassSecs: p.Result.Duration.Seconds(),
		Requests: r.perCluster(before, r.requests(ctx))}, d, nil
}

// stuckProfile never becomes healthy on the first cluster: its Deployment
// has no controller here.
const stuckProfile = `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: stuck}
spec:
  clusterSelector: {matchLabels: {stuck: "yes"}}
  healthTimeout: 5m
  addons:
  - name: stuck
    manifests: {path: stuck}
`

const stuckDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: never-ready, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: never-ready}}
  template:
    metadata: {labels: {app: never-ready}}
    spec:
      containers: [{name: c, image: example.invalid/never-ready:1}]
`

// probe is a profile on every cluster whose ConfigMap carries a
// generation, to time a change.
func probeFiles(gen int) map[string]string {
	return map[string]string{
		"profiles/probe.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: probe}\nspec:\n" +
			"  clusterSelector: {matchExpressions: [{key: env, operator: Exists}]}\n  addons:\n  - name: probe\n    manifests: {path: probe}\n",
		"probe/cm.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe, namespace: default}\ndata: {generation: \"%d\"}\n", gen),
	}
}

// stuck adds a profile that never becomes healthy on the first cluster
// (and a probe profile on all), then commits a change of the probe and
// times it per cluster: applied on the others, on the stuck cluster
// (whose other profile moves on too), and recorded on the status branch.
func (r *rolloutRound) stuck(ctx context.Context, g *GitRepo, d *Daemon, f Fleet) ([]Sample, error) {
	first := f.Clusters[0]
	files := probeFiles(1)
	files["profiles/stuck.yaml"] = stuckProfile
	files["stuck/deploy.yaml"] = stuckDeployment
	files["clusters/"+first.Name+"/cluster.yaml"] = strings.Replace(clusterYAML(first), "labels: {", "labels: {stuck: \"yes\", ", 1)
	if _, err := g.Commit(ctx, "a profile that never becomes healthy", files); err != nil {
		return nil, err
	}
	d.Trigger()
	if err := r.waitProbe(ctx, f, 1, time.Now()); err != nil {
		return nil, fmt.Errorf("setting up the stuck cluster: %w", err)
	}
	rev, err := g.Commit(ctx, "probe generation 2", probeFiles(2))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	d.Trigger()
	times, err := r.probeTimes(ctx, f, 2, start)
	if err != nil {
		return nil, err
	}
	status, err := r.statusTime(ctx, g, f, rev, start)
	if err != nil {
		return nil, err
	}
	out := []Sample{{Method: MethodStuckOwn, Secs: times[first.Name]}, {Method: MethodStuckStatus, Secs: status}}
	for _, c := range f.Clusters[1:] {
		out = append(out, Sample{Method: MethodStuckOthers, Secs: times[c.Name]})
	}
	return out, nil
}

// waitProbe waits until every cluster holds generation gen of the probe.
func (r *rolloutRound) waitProbe(ctx context.Context, f Fleet, gen int, start time.Time) error {
	_, err := r.probeTimes(ctx, f, gen, start)
	return err
}

// probeTimes polls every cluster (every 50 ms) until it holds generation
// gen of the probe ConfigMap and returns the seconds from start.
func (r *rolloutRound) probeTimes(ctx context.Context, f Fleet, gen int, start time.Time) (map[string]float64, error) {
	return r.probeNamed(ctx, f.Clusters, probePoll{name: "probe", key: "generation", value: fmt.Sprint(gen), every: 50 * time.Millisecond}, start)
}

// probePoll is a ConfigMap of the default namespace polled until its data
// key holds value.
type probePoll struct {
	name, key, value string
	every            time.Duration
}

// probeNamed polls every cluster until its ConfigMap holds the value and
// returns the seconds from start, by cluster.
func (r *rolloutRound) probeNamed(ctx context.Context, clusters []FleetCluster, p probePoll, start time.Time) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	out := map[string]float64{}
	var wg sync.WaitGroup
	errs := make(chan error, len(clusters))
	for _, c := range clusters {
		wg.Go(func() {
			cs, err := kubernetes.NewForConfig(r.cs.Cluster(c.Name).RESTConfig())
			if err != nil {
				errs <- err
				return
			}
			for ctx.Err() == nil {
				cm, err := cs.CoreV1().ConfigMaps("default").Get(ctx, p.name, metav1.GetOptions{})
				if err == nil && cm.Data[p.key] == p.value {
					mu.Lock()
					out[c.Name] = time.Since(start).Seconds()
					mu.Unlock()
					return
				}
				if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
					errs <- fmt.Errorf("cluster %s: %w", c.Name, err)
					return
				}
				time.Sleep(p.every)
			}
			errs <- fmt.Errorf("cluster %s: ConfigMap %s: %s=%s not applied within 2m", c.Name, p.name, p.key, p.value)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return out, err
	}
	return out, nil
}

// statusTime polls the status branch (every 200 ms) until every cluster's
// record names rev and returns the seconds from start.
func (r *rolloutRound) statusTime(ctx context.Context, g *GitRepo, f Fleet, rev string, start time.Time) (float64, error) {
	deadline := time.Now().Add(2 * time.Minute)
	names := make([]string, 0, len(f.Clusters))
	for _, c := range f.Clusters {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	for time.Now().Before(deadline) {
		if _, err := runGit(ctx, g.work, "fetch", "-q", "origin", "+regatta/status:refs/remotes/origin/regatta/status"); err == nil {
			if g.statusNames(ctx, names, rev) {
				return time.Since(start).Seconds(), nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return 0, fmt.Errorf("the status branch does not record %s for every cluster within 2m", short(rev))
}

// statusNames reports whether every cluster's status file on the fetched
// status branch names rev.
func (g *GitRepo) statusNames(ctx context.Context, names []string, rev string) bool {
	for _, n := range names {
		out, err := runGit(ctx, g.work, "show", "origin/regatta/status:status/clusters/"+n+".yaml")
		if err != nil || !strings.Contains(out, "sourceRevision: "+rev) {
			return false
		}
	}
	return true
}
