package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// Methods of the health phase (issue 28).
const (
	MethodHealthRegatta = "health-regatta"
	MethodHealthMinimal = "health-minimal"
	MethodHealthFlux    = "health-flux"
)

// HealthReplicas are the replicas of every profile's Deployment.
const HealthReplicas = 3

// HealthOptions configures the health phase: clusters with controllers and
// kwok nodes, profiles with Deployments, timed from the commit to every
// Deployment Available.
type HealthOptions struct {
	Rounds   int
	Clusters int
	Profiles int
	Bins     *Binaries
	// Flux runs Flux's kustomize-controller as the third method, when its
	// binary is given.
	Flux FluxOptions
	// Timeout bounds one method's turn.
	Timeout time.Duration
	// Dir receives logs, trees and kubeconfigs (internal/bench/raw/health).
	Dir  string
	Logf func(string, ...any)
}

// HealthResult is the health phase's measurements.
type HealthResult struct {
	Clusters int `json:"clusters"`
	Profiles int `json:"profiles"`
	Replicas int `json:"replicas"`
	// FluxConcurrent is kustomize-controller's --concurrent (0: Flux not run).
	FluxConcurrent int            `json:"fluxConcurrent,omitempty"`
	FluxController string         `json:"fluxController,omitempty"`
	Rounds         []HealthRound  `json:"rounds"`
	Samples        []HealthSample `json:"samples"`
}

// HealthRound is one round: each method's turn on clusters of its own,
// started fresh for it.
type HealthRound struct {
	Round int `json:"round"`
	// StartSecs is the clusters' start, summed over the round's turns.
	StartSecs float64 `json:"startSeconds"`
	// IdleCores is the highest CPU the whole machine used, over the turns,
	// while a turn's fresh clusters sat idle for a few seconds before it,
	// in cores (each turn's is in its sample).
	IdleCores float64 `json:"idleCores"`
	// ClusterIdleCores is the part of it the clusters' processes (API
	// servers, etcd, controllers, schedulers, kwok) used.
	ClusterIdleCores float64  `json:"clusterIdleCores"`
	Order            []string `json:"order"`
}

// HealthSample is one method's turn.
type HealthSample struct {
	Method string `json:"method"`
	Round  int    `json:"round"`
	// Secs is from the commit to every Deployment on every cluster
	// Available as the bench's poll saw it; for Flux, also every
	// Kustomization Ready at the revision (the later of the two).
	Secs float64 `json:"seconds"`
	// AvailableSecs is the bench's poll alone.
	AvailableSecs float64 `json:"availableSeconds"`
	// ReadySecs is when the method itself said so: regatta's pass of the
	// revision settled with every pair healthy; every Kustomization Ready.
	ReadySecs float64 `json:"readySeconds,omitempty"`
	// AppliedSecs is the minimal program's apply alone.
	AppliedSecs float64 `json:"appliedSeconds,omitempty"`
	// SourceSecs is regatta's commit, push and fetch: from the commit to
	// the daemon's first work on the revision (its pass's start).
	SourceSecs float64 `json:"sourceSeconds,omitempty"`
	// CommitSecs is the part of SourceSecs that is the bench's own work:
	// writing the files, git add, commit and push to the loopback server.
	CommitSecs float64 `json:"commitSeconds,omitempty"`
	// PerCluster is when each cluster had every Deployment Available.
	PerCluster map[string]float64 `json:"perClusterSeconds,omitempty"`
	// ClusterStartSecs and IdleCores are the turn's fresh clusters: how
	// long they took to start, and the CPU the machine (and they) used
	// while they sat idle before the turn.
	ClusterStartSecs float64 `json:"clusterStartSeconds,omitempty"`
	IdleCores        float64 `json:"idleCores,omitempty"`
	ClusterIdleCores float64 `json:"clusterIdleCores,omitempty"`
	CPU              CPUUse  `json:"cpu,omitempty"`
	Err              string  `json:"error,omitempty"`
}

// healthRound is the state of one round.
type healthRound struct {
	o   HealthOptions
	n   int
	dir string
	cs  *Clusters
}

// RunHealth runs the rounds, each on fresh clusters with the methods in an
// order rotated by the round number.
func RunHealth(ctx context.Context, o HealthOptions, res *HealthResult) error {
	res.Clusters, res.Profiles, res.Replicas = o.Clusters, o.Profiles, HealthReplicas
	if o.Flux.Controller != "" {
		res.FluxConcurrent, res.FluxController = o.Flux.concurrent(o.Clusters, o.Profiles), o.Flux.Controller
	}
	for n := range o.Rounds {
		if err := runHealthRound(ctx, o, n, res); err != nil {
			return fmt.Errorf("round %d: %w", n, err)
		}
	}
	return nil
}

func runHealthRound(ctx context.Context, o HealthOptions, n int, res *HealthResult) error {
	r := &healthRound{o: o, n: n, dir: filepath.Join(o.Dir, fmt.Sprintf("round-%d", n))}
	hr := HealthRound{Round: n, Order: r.methods()}
	o.Logf("health round %d: order %s, each on %d fresh clusters with controllers", n, strings.Join(hr.Order, ", "), o.Clusters)
	for _, m := range hr.Order {
		s, err := r.turn(ctx, m)
		if err != nil {
			return err
		}
		s.Round = n
		hr.StartSecs += s.ClusterStartSecs
		hr.IdleCores, hr.ClusterIdleCores = max(hr.IdleCores, s.IdleCores), max(hr.ClusterIdleCores, s.ClusterIdleCores)
		o.Logf("health round %d: %-14s %6.2fs (available %.2fs, ready %.2fs, applied %.2fs; clusters in %.0fs, idle: machine %.2f cores, clusters %.2f) %s",
			n, s.Method, s.Secs, s.AvailableSecs, s.ReadySecs, s.AppliedSecs, s.ClusterStartSecs, s.IdleCores, s.ClusterIdleCores, s.Err)
		res.Samples = append(res.Samples, s)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	res.Rounds = append(res.Rounds, hr)
	return nil
}

// turn runs one method on clusters started for it. Every turn meets
// clusters in the same state: the first writes to a fresh cluster cost its
// API server and etcd more than later ones, and the method that went
// first in a shared round paid for them (regatta over the minimal program:
// median 1.29x when regatta went first, 1.02x when it went second, in 19
// rounds of 2026-12-02), and later turns ran beside the objects and Pods
// of the earlier ones.
func (r *healthRound) turn(ctx context.Context, method string) (HealthSample, error) {
	start := time.Now()
	cs, err := StartControllerClusters(ctx, r.o.Bins, r.o.Clusters, filepath.Join(r.dir, method, "kubeconfigs"))
	if err != nil {
		return HealthSample{}, err
	}
	defer cs.Stop()
	r.cs = cs
	started := time.Since(start).Seconds()
	idle, clusterIdle := idleCores(ctx, 5*time.Second)
	s := r.run(ctx, method)
	s.ClusterStartSecs, s.IdleCores, s.ClusterIdleCores = started, idle, clusterIdle
	return s, nil
}

// idleCores measures the CPU the machine and the clusters' processes use
// over window, in cores.
func idleCores(ctx context.Context, window time.Duration) (machine, clusters float64) {
	before := ReadCPUUse()
	select {
	case <-ctx.Done():
	case <-time.After(window):
	}
	used := ReadCPUUse().Sub(before)
	for name, secs := range used {
		switch name {
		case "kube-apiserver", "etcd", "kube-controller", "kube-scheduler", "kwok":
			clusters += secs
		}
	}
	return used["machine"] / window.Seconds(), clusters / window.Seconds()
}

// methods returns the round's methods, rotated by the round number; Flux
// only when its controller is given.
func (r *healthRound) methods() []string {
	all := []string{MethodHealthRegatta, MethodHealthMinimal, MethodHealthFlux}
	if r.o.Flux.Controller == "" {
		all = slices.DeleteFunc(all, func(m string) bool { return m == MethodHealthFlux })
	}
	k := r.n % len(all)
	return append(all[k:], all[:k]...)
}

func (r *healthRound) run(ctx context.Context, method string) HealthSample {
	ctx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	var s HealthSample
	var err error
	switch method {
	case MethodHealthRegatta:
		s, err = r.regatta(ctx)
	case MethodHealthMinimal:
		s, err = r.minimal(ctx)
	case MethodHealthFlux:
		s, err = r.flux(ctx)
	}
	s.Method = method
	if err != nil {
		s.Err = err.Error()
	}
	return s
}

// fleet is a method's fleet: every profile Kustomize (an overlay per
// variant) with a Deployment, in namespaces of its own prefix.
func (r *healthRound) fleet(prefix string) Fleet {
	return Fleet{Style: StyleOverlays, Prefix: prefix, Clusters: r.cs.Fleet, Profiles: r.o.Profiles, Replicas: HealthReplicas}
}

// poll is the bench's own judge of a fleet: every 100 ms per cluster.
func (r *healthRound) poll(f Fleet) AvailablePoll {
	cfgs := map[string]*rest.Config{}
	for _, c := range f.Clusters {
		cfgs[c.Name] = r.cs.Cluster(c.Name).RESTConfig()
	}
	return AvailablePoll{Configs: cfgs, Prefix: f.Prefix, Want: f.Profiles, Every: 100 * time.Millisecond}
}

// fill records a poll's answer in a sample.
func (s *HealthSample) fill(t AvailableTimes) {
	s.AvailableSecs = t.Last.Seconds()
	s.Secs = max(s.AvailableSecs, s.ReadySecs)
	s.PerCluster = map[string]float64{}
	for name, d := range t.PerCluster {
		s.PerCluster[name] = d.Seconds()
	}
}

// regatta starts a daemon on a repository holding only the clusters, waits
// for its first pass, then times the commit of the profiles: pushed, the
// daemon triggered (as a push webhook does), until every Deployment is
// Available and until the daemon's pass of the commit settles healthy.
func (r *healthRound) regatta(ctx context.Context) (HealthSample, error) {
	f := r.fleet("hr")
	dir := filepath.Join(r.dir, "regatta")
	g, err := StartGitRepo(ctx, dir)
	if err != nil {
		return HealthSample{}, err
	}
	defer g.Close()
	files := f.Files()
	rev0, err := g.Commit(ctx, "clusters", clustersOnly(files))
	if err != nil {
		return HealthSample{}, err
	}
	logf, err := os.Create(filepath.Join(dir, "regatta.log"))
	if err != nil {
		return HealthSample{}, err
	}
	defer logf.Close()
	d, err := StartDaemon(ctx, DaemonOptions{RepoURL: g.URL(), HelmCacheDir: filepath.Join(dir, "helm"), Log: logf, Regatta: r.o.Bins.Regatta})
	if err != nil {
		return HealthSample{}, err
	}
	defer d.Stop()
	if _, err := d.WaitRevision(ctx, rev0, time.Minute); err != nil {
		return HealthSample{}, fmt.Errorf("first pass: %w", err)
	}
	cpu := ReadCPUUse()
	start := time.Now()
	avail := r.poll(f).Start(ctx, start)
	rev, err := g.Commit(ctx, "profiles with Deployments", files)
	if err != nil {
		return HealthSample{}, err
	}
	pushed := time.Since(start).Seconds()
	d.Trigger()
	p, err := d.WaitRevision(ctx, rev, r.o.Timeout)
	if err != nil {
		return HealthSample{}, err
	}
	s := HealthSample{ReadySecs: p.At.Sub(start).Seconds(), CommitSecs: pushed}
	s.SourceSecs = s.ReadySecs - p.Result.Duration.Seconds()
	a := <-avail
	s.fill(a.Times)
	s.Secs = s.AvailableSecs // regatta's own status is recorded, not waited for
	s.CPU = ReadCPUUse().Sub(cpu)
	return s, a.Err
}

// clustersOnly returns the cluster folders of a fleet's files.
func clustersOnly(files map[string]string) map[string]string {
	out := map[string]string{}
	for name, content := range files {
		if strings.HasPrefix(name, "clusters/") {
			out[name] = content
		}
	}
	return out
}

// minimal pre-renders the fleet (untimed), then times the minimal program:
// server-side apply of every object, and the poll from the same instant.
func (r *healthRound) minimal(ctx context.Context) (HealthSample, error) {
	f := r.fleet("hm")
	dir := filepath.Join(r.dir, "minimal")
	if err := WriteTree(dir, f.Files()); err != nil {
		return HealthSample{}, err
	}
	objs, err := RenderObjects(ctx, os.DirFS(dir), filepath.Join(dir, ".helm"))
	if err != nil {
		return HealthSample{}, err
	}
	kcs := map[string][]byte{}
	for _, c := range f.Clusters {
		kcs[c.Name] = c.Kubeconfig
	}
	cpu := ReadCPUUse()
	applied, t, err := Limit{Objects: objs, Kubeconfigs: kcs}.RunAvailable(ctx, r.poll(f))
	s := HealthSample{AppliedSecs: applied.Seconds(), CPU: ReadCPUUse().Sub(cpu)}
	s.fill(t)
	return s, err
}
