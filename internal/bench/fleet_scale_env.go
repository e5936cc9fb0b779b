package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// logicalEnv is the fleet phase's API servers: Servers hold the logical
// clusters (cluster i on Servers[ServerOf(i, len(Servers))]), Mgmt holds
// their kubeconfig Secrets and regatta's leases.
type logicalEnv struct {
	env     *testenv.Env
	Servers []*testenv.Cluster
	Mgmt    *testenv.Cluster
	// MgmtKubeconfig is the management cluster's admin kubeconfig file.
	MgmtKubeconfig string
	Names          []string
}

// mgmtName is the management API server's name in the environment.
const mgmtName = "mgmt"

// startLogicalEnv starts servers fresh API servers listening on every
// loopback address (so each logical cluster can have its own) with audit
// logs, and a management one.
func startLogicalEnv(ctx context.Context, bins *Binaries, n, servers int, dir string) (*logicalEnv, error) {
	opts := testenv.Options{BinDir: bins.Dir, EtcdBinary: bins.Etcd, AuditLog: true,
		APIServerFlags: []string{"--bind-address=0.0.0.0"}}
	for s := range servers {
		opts.Clusters = append(opts.Clusters, testenv.ClusterOptions{Name: fmt.Sprintf("srv%02d", s)})
	}
	opts.Clusters = append(opts.Clusters, testenv.ClusterOptions{Name: mgmtName})
	env, err := testenv.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	le := &logicalEnv{env: env, Mgmt: env.Cluster(mgmtName)}
	for _, co := range opts.Clusters[:servers] {
		le.Servers = append(le.Servers, env.Cluster(co.Name))
	}
	for i := range n {
		le.Names = append(le.Names, LogicalName(i))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		env.Stop()
		return nil, err
	}
	le.MgmtKubeconfig = filepath.Join(dir, "mgmt.kubeconfig")
	if err := os.WriteFile(le.MgmtKubeconfig, le.Mgmt.Kubeconfig(), 0o600); err != nil {
		env.Stop()
		return nil, err
	}
	return le, nil
}

// Server is the API server of logical cluster i.
func (le *logicalEnv) Server(i int) *testenv.Cluster { return le.Servers[ServerOf(i, len(le.Servers))] }

// Stop stops every process.
func (le *logicalEnv) Stop() { le.env.Stop() }

// Ports are the API servers' ports (regatta's connections to them are
// counted).
func (le *logicalEnv) Ports() map[int]bool {
	out := map[int]bool{}
	for _, s := range le.Servers {
		u, err := url.Parse(s.URL())
		if err != nil {
			continue
		}
		if p, err := strconv.Atoi(u.Port()); err == nil {
			out[p] = true
		}
	}
	return out
}

// RSS sums the API servers' resident memory (the fleet's, the management
// one aside) and etcd's.
func (le *logicalEnv) RSS() (apiservers, etcd int64) {
	for _, s := range le.Servers {
		if r, err := s.RSS(); err == nil {
			apiservers += r
		}
	}
	etcd, _ = le.env.EtcdRSS()
	return apiservers, etcd
}

// CPU sums the CPU time the fleet's API servers and etcd have used.
func (le *logicalEnv) CPU() time.Duration {
	var pids []int
	for _, s := range le.Servers {
		if pid, err := s.Pid(); err == nil {
			pids = append(pids, pid)
		}
	}
	var total time.Duration
	for _, pid := range append(pids, le.env.EtcdPids()...) {
		if c, err := ProcCPU(pid); err == nil {
			total += c
		}
	}
	return total
}

// regattaNamespace holds regatta's kubeconfig Secrets in the management
// cluster.
const regattaNamespace = "regatta-system"

// setupUsers gives every logical cluster its namespace and a ServiceAccount
// RBAC limits to it (testenv's NamespaceUser, through the cluster's own
// loopback address) and stores its kubeconfig as the Secret
// <name>-kubeconfig in the management cluster's namespace secretsNS
// (regatta-system for regatta, flux-system for Flux), with workers
// requests in flight.
func (le *logicalEnv) setupUsers(ctx context.Context, workers int, secretsNS string) error {
	mgmt, err := kubernetes.NewForConfig(le.Mgmt.RESTConfig())
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretsNS}}
	if _, err := mgmt.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	cfg := le.Mgmt.RESTConfig()
	cfg.QPS, cfg.Burst = 500, 1000
	if mgmt, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	return forEach(ctx, len(le.Names), workers, func(i int) error {
		name := le.Names[i]
		kc, err := le.Server(i).NamespaceUser(ctx, "regatta", []string{LogicalNamespace(name)}, LogicalHost(i))
		if err != nil {
			return fmt.Errorf("cluster %s: %w", name, err)
		}
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-kubeconfig", Namespace: secretsNS},
			Data: map[string][]byte{"value": kc}}
		if _, err := mgmt.CoreV1().Secrets(secretsNS).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("cluster %s: kubeconfig Secret: %w", name, err)
		}
		return nil
	})
}

// scrape sums the fleet API servers' request counts.
func (le *logicalEnv) scrape(ctx context.Context) (RequestCounts, error) {
	sum := RequestCounts{}
	for _, s := range le.Servers {
		rc, err := ScrapeRequests(ctx, s.RESTConfig())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name(), err)
		}
		sum.Add(rc)
	}
	return sum, nil
}

// requestsSince is the fleet API servers' requests since before, per
// cluster.
func (le *logicalEnv) requestsSince(ctx context.Context, before RequestCounts) (float64, error) {
	after, err := le.scrape(ctx)
	if err != nil {
		return 0, err
	}
	writes, reads := after.Sub(before).Totals()
	return (writes + reads) / float64(len(le.Names)), nil
}

// background counts the fleet API servers' own requests over window, per
// minute, before a method starts (subtracted from its idle figures).
func (le *logicalEnv) background(ctx context.Context, window time.Duration) (RequestCounts, error) {
	before, err := le.scrape(ctx)
	if err != nil {
		return nil, err
	}
	if err := sleepCtx(ctx, window); err != nil {
		return nil, err
	}
	after, err := le.scrape(ctx)
	if err != nil {
		return nil, err
	}
	return after.Sub(before).Scale(time.Minute.Seconds() / window.Seconds()), nil
}

// IdleLoad is a method's requests to the fleet API servers over an idle
// window, per cluster per minute, the servers' own subtracted: by verb
// and resource, and split into WATCH requests (a watch re-opened) and the
// rest.
type IdleLoad struct {
	Rows    []RequestRow
	Watches float64
	Other   float64
}

// newIdleLoad is the load of the counts before and after an idle window
// of minutes, less bg (per minute), over clusters.
func newIdleLoad(before, after, bg RequestCounts, minutes float64, clusters int) IdleLoad {
	per := after.Sub(before).Scale(1 / minutes).Sub(bg).Scale(1 / float64(clusters))
	l := IdleLoad{Rows: per.Rows()}
	for k, v := range per {
		if k.Verb == "WATCH" {
			l.Watches += v
		} else {
			l.Other += v
		}
	}
	return l
}

// forEach runs fn(0..n-1) with at most workers at once; it returns the
// first error (the others still run to their end).
func forEach(ctx context.Context, n, workers int, fn func(i int) error) error {
	work := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range max(1, workers) {
		wg.Go(func() {
			for i := range work {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		select {
		case work <- i:
		case <-ctx.Done():
			close(work)
			wg.Wait()
			return ctx.Err()
		}
	}
	close(work)
	wg.Wait()
	return first
}

// timed runs fn and returns its seconds.
// startFleetEnv starts a fleet size's API servers, then its namespace
// users with their kubeconfig Secrets in the management cluster's
// secretsNS, timing each step; on success the caller stops le.
func startFleetEnv(ctx context.Context, o FleetOptions, servers int, secretsNS string) (le *logicalEnv, serversSecs, usersSecs float64, err error) {
	serversSecs, err = timed(func() error {
		le, err = startLogicalEnv(ctx, o.Bins, o.Clusters, servers, filepath.Join(o.Dir, "kubeconfigs"))
		return err
	})
	if err != nil {
		return nil, serversSecs, 0, err
	}
	if usersSecs, err = timed(func() error { return le.setupUsers(ctx, o.SetupWorkers, secretsNS) }); err != nil {
		le.Stop()
		return nil, serversSecs, usersSecs, err
	}
	return le, serversSecs, usersSecs, nil
}

func timed(fn func() error) (float64, error) {
	start := time.Now()
	err := fn()
	return time.Since(start).Seconds(), err
}
