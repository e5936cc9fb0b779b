package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Env is a set of clusters started together. Stop it when done.
type Env struct {
	opts     Options
	dir      string
	bins     binaries
	ports    *ports
	etcds    []*etcd
	clusters []*Cluster
	startup  time.Duration
	stopOnce sync.Once
}

// Start starts the clusters of opts side by side and waits until every API
// server is ready. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Env, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("start test environment: %w", err)
	}
	bins, err := findBinaries(o)
	if err != nil {
		return nil, fmt.Errorf("start test environment: %w", err)
	}
	for _, co := range o.Clusters {
		if err := bins.check(co); err != nil {
			return nil, fmt.Errorf("start test environment: cluster %s: %w", co.Name, err)
		}
	}
	dir, err := makeEnvDir(o.TempDir)
	if err != nil {
		return nil, fmt.Errorf("start test environment: %w", err)
	}
	e := &Env{opts: o, dir: dir, bins: bins, ports: newPorts()}
	begin := time.Now()
	if err := e.start(ctx); err != nil {
		e.Stop()
		return nil, fmt.Errorf("start test environment: %w", err)
	}
	e.startup = time.Since(begin)
	o.Logf("testenv: %d clusters ready in %s (folder %s)", len(e.clusters), e.startup.Round(time.Millisecond), dir)
	return e, nil
}

// start creates the clusters, then starts their API servers in parallel.
func (e *Env) start(ctx context.Context) error {
	if err := e.createClusters(ctx); err != nil {
		return err
	}
	errs := make([]error, len(e.clusters))
	var wg sync.WaitGroup
	for i, c := range e.clusters {
		wg.Go(func() { errs[i] = c.Start(ctx, e.opts.Clusters[i].Version) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// createClusters writes every cluster's folder and credentials and starts
// the etcd processes they use.
func (e *Env) createClusters(ctx context.Context) error {
	var shared *etcd
	if !e.opts.EtcdPerCluster {
		var err error
		if shared, err = e.startEtcd(ctx, e.dir); err != nil {
			return err
		}
	}
	for _, co := range e.opts.Clusters {
		c, err := e.newCluster(ctx, co, shared)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", co.Name, err)
		}
		e.clusters = append(e.clusters, c)
	}
	return nil
}

func (e *Env) startEtcd(ctx context.Context, dir string) (*etcd, error) {
	etcd, err := startEtcd(ctx, e.bins.etcd, dir, e.ports, e.opts.ReadyTimeout)
	if err != nil {
		return nil, err
	}
	e.etcds = append(e.etcds, etcd)
	return etcd, nil
}

// newCluster prepares a cluster without starting it. With shared nil, the
// cluster gets an etcd of its own.
func (e *Env) newCluster(ctx context.Context, co ClusterOptions, shared *etcd) (*Cluster, error) {
	dir := filepath.Join(e.dir, co.Name)
	if err := os.MkdirAll(filepath.Join(dir, "certs"), 0o700); err != nil {
		return nil, err
	}
	files, err := writeClusterFiles(dir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		name: co.Name, dir: dir, files: files, bins: e.bins, ports: e.ports,
		etcd: shared, etcdPrefix: "/registry",
		extraFlags: append(append([]string(nil), e.opts.APIServerFlags...), co.APIServerFlags...),
		env:        e.opts.APIServerEnv,
		timeout:    e.opts.ReadyTimeout, logf: e.opts.Logf,
	}
	if co.Controllers != nil {
		ctl := co.Controllers.withDefaults()
		c.controllers = &ctl
		c.extraFlags = append(append([]string(nil), controllersAPIServerFlags...), c.extraFlags...)
	}
	if e.opts.AuditLog {
		flags, err := c.auditFlags()
		if err != nil {
			return nil, err
		}
		c.extraFlags = append(c.extraFlags, flags...)
	}
	if co.TokenWebhook != "" {
		flags, err := c.tokenWebhookFlags(co.TokenWebhook, co.TokenWebhookCA)
		if err != nil {
			return nil, err
		}
		c.extraFlags = append(c.extraFlags, flags...)
	}
	if shared != nil {
		c.etcdPrefix = "/clusters/" + co.Name + "/registry"
	} else if c.etcd, err = e.startEtcd(ctx, dir); err != nil {
		return nil, err
	}
	if c.port, err = e.ports.free(); err != nil {
		return nil, err
	}
	return c, nil
}

// Cluster returns the cluster with the given name, or nil.
func (e *Env) Cluster(name string) *Cluster {
	for _, c := range e.clusters {
		if c.name == name {
			return c
		}
	}
	return nil
}

// Clusters returns the clusters in the order of Options.Clusters.
func (e *Env) Clusters() []*Cluster { return append([]*Cluster(nil), e.clusters...) }

// Dir returns the environment's folder: per-cluster folders with logs,
// credentials and (with EtcdPerCluster) etcd data.
func (e *Env) Dir() string { return e.dir }

// StartupTime is how long Start took to bring every cluster up.
func (e *Env) StartupTime() time.Duration { return e.startup }

// EtcdRSS returns the resident memory of all etcd processes in bytes.
func (e *Env) EtcdRSS() (int64, error) {
	var total int64
	for _, pid := range e.EtcdPids() {
		rss, err := rssBytes(pid)
		if err != nil {
			return 0, err
		}
		total += rss
	}
	return total, nil
}

// EtcdPids returns the process ids of the etcd processes.
func (e *Env) EtcdPids() []int {
	pids := make([]int, 0, len(e.etcds))
	for _, etcd := range e.etcds {
		pids = append(pids, etcd.proc.pid())
	}
	return pids
}

// Stop kills every process the environment started and removes its folder.
// It is safe to call more than once.
func (e *Env) Stop() {
	e.stopOnce.Do(func() {
		var wg sync.WaitGroup
		for _, c := range e.clusters {
			wg.Go(c.Stop)
		}
		wg.Wait()
		for _, etcd := range e.etcds {
			wg.Go(etcd.stop)
		}
		wg.Wait()
		if err := os.RemoveAll(e.dir); err != nil {
			e.opts.Logf("testenv: remove %s: %v", e.dir, err)
		}
	})
}
