package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FleetFluxRun is Flux's kustomize-controller on a fleet size (issue 37
// item 4): the same logical clusters, objects and marker watch as
// regatta's run, on fresh API servers of its own, one Kustomization per
// cluster with spec.kubeConfig.secretRef.
type FleetFluxRun struct {
	Clusters int `json:"clusters"`
	Servers  int `json:"apiServers"`
	Objects  int `json:"objectsPerCluster"`
	// Concurrent is kustomize-controller's --concurrent.
	Concurrent  int     `json:"concurrent"`
	ServersSecs float64 `json:"serversSeconds"`
	UsersSecs   float64 `json:"usersSeconds"`
	// StartSecs is from creating the Kustomizations on an artifact that
	// builds nothing to every one Ready at it: the controller has reached
	// each cluster (regatta's StartSecs).
	StartSecs float64 `json:"startSeconds"`
	// First and Change are from the artifact's update (the commit; no
	// source-controller fetch in between) to each cluster having it;
	// FirstReadySecs and ChangeReadySecs to every Kustomization Ready at it.
	First           Latency `json:"firstRollout"`
	Change          Latency `json:"change"`
	FirstReadySecs  float64 `json:"firstReadySeconds"`
	ChangeReadySecs float64 `json:"changeReadySeconds"`
	// ChangeRequests are the fleet API servers' requests from the change's
	// artifact to every Kustomization Ready, per cluster.
	ChangeRequests float64 `json:"changeRequestsPerCluster"`
	// Converged is the controller after the change; Idle after the idle
	// window (RSS from /proc, heap and goroutines from its /metrics).
	Converged ProcSample `json:"converged"`
	Idle      ProcSample `json:"idle"`
	IdleSecs  float64    `json:"idleSeconds"`
	// IdleRequests, IdleWatches and IdleOther as regatta's; IdleCPU is the
	// controller's CPU seconds per minute of the idle window.
	IdleRequests  []RequestRow `json:"idleRequestsPerClusterPerMinute"`
	IdleWatches   float64      `json:"idleWatchesPerClusterPerMinute"`
	IdleOther     float64      `json:"idleOtherPerClusterPerMinute"`
	IdleCPU       float64      `json:"idleCpuSecondsPerMinute"`
	APIServersRSS int64        `json:"apiServersRssBytes"`
	EtcdRSS       int64        `json:"etcdRssBytes"`
	Err           string       `json:"error,omitempty"`
	// Measured is the commit and date of a run carried over from an
	// earlier results.json (nil: this run).
	Measured *PhaseRun `json:"measured,omitempty"`
}

// fleetFluxRun is the state of one Flux run.
type fleetFluxRun struct {
	o     FleetOptions
	le    *logicalEnv
	fx    *fluxEnv
	res   *FleetFluxRun
	fleet ScaleFleet
	watch *markerWatch
	bg    RequestCounts
}

// RunFleetFlux runs Flux's kustomize-controller on a fleet size: fresh API
// servers, the namespace users with their kubeconfig Secrets in the
// management cluster's flux-system, then the Kustomizations through the
// first rollout, the change and the idle window.
func RunFleetFlux(ctx context.Context, o FleetOptions, flux FluxOptions) (*FleetFluxRun, error) {
	servers := ServersFor(o.Clusters, o.PerServer)
	res := &FleetFluxRun{Clusters: o.Clusters, Servers: servers, Objects: 2 * o.Objects, Concurrent: flux.concurrent(o.Clusters, 1),
		IdleSecs: o.Idle.Seconds()}
	le, serversSecs, usersSecs, err := startFleetEnv(ctx, o, servers, fluxNamespace)
	res.ServersSecs, res.UsersSecs = serversSecs, usersSecs
	if err != nil {
		return res, err
	}
	defer le.Stop()
	o.Logf("fleet flux %d: %d API servers in %.1fs, namespace users and kubeconfig Secrets in %.1fs", o.Clusters, servers, res.ServersSecs, res.UsersSecs)
	fr := &fleetFluxRun{o: o, le: le, res: res, fleet: ScaleFleet{Clusters: le.Names, Objects: o.Objects}}
	if fr.fx, err = newFluxEnv(ctx, le.Mgmt, filepath.Join(o.Dir, "flux"), flux, res.Concurrent); err != nil {
		return res, err
	}
	defer fr.fx.stop()
	// Listing every Kustomization is the bench's work: at 500 of them, a
	// list every 100 ms would take the controller's CPU.
	fr.fx.poll = time.Second
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, step := range []func(context.Context) error{fr.start, fr.rollout, fr.change, fr.idle} {
		if err := step(wctx); err != nil {
			return res, err
		}
	}
	res.APIServersRSS, res.EtcdRSS = le.RSS()
	return res, nil
}

// FluxKustomizations are the Flux method's: one per cluster, building the
// artifact's fleet folder with ${ns} substituted by the cluster's
// namespace, which is also its target namespace (the cluster's token
// reaches no other).
func (f ScaleFleet) FluxKustomizations() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, c := range f.Clusters {
		k := fluxKustomization(c, "./"+fluxFleetPath, c)
		ns := LogicalNamespace(c)
		_ = unstructured.SetNestedField(k.Object, ns, "spec", "targetNamespace")
		_ = unstructured.SetNestedStringMap(k.Object, map[string]string{"ns": ns}, "spec", "postBuild", "substitute")
		out = append(out, k)
	}
	return out
}

// start counts the API servers' own requests, starts the marker watches,
// and creates the Kustomizations on an artifact that builds nothing.
func (fr *fleetFluxRun) start(ctx context.Context) error {
	var err error
	if fr.bg, err = fr.le.background(ctx, fr.o.Background); err != nil {
		return err
	}
	if fr.watch, err = watchMarkers(ctx, fr.le.Servers); err != nil {
		return err
	}
	empty, err := fr.fx.publish(ctx, fr.fleet.FluxFiles(0, false))
	if err != nil {
		return err
	}
	begin := time.Now()
	if err := fr.fx.createKustomizations(ctx, fr.fleet.FluxKustomizations()); err != nil {
		return err
	}
	d, err := fr.waitReady(ctx, empty, begin)
	if err != nil {
		return fmt.Errorf("empty artifact: %w", err)
	}
	fr.res.StartSecs = d.Seconds()
	fr.o.Logf("fleet flux %d: every Kustomization Ready on the empty artifact in %.1fs", fr.o.Clusters, fr.res.StartSecs)
	return nil
}

// within is how long a rollout may take, as regatta's.
func (fr *fleetFluxRun) within() time.Duration {
	return 10*time.Minute + time.Duration(fr.o.Clusters)*300*time.Millisecond
}

// waitReady waits, at most within, for every Kustomization Ready at rev.
func (fr *fleetFluxRun) waitReady(ctx context.Context, rev string, start time.Time) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, fr.within())
	defer cancel()
	return fr.fx.waitReady(ctx, rev, start)
}

// publishTimed publishes the artifact at generation and times each
// cluster having gens and every Kustomization Ready at it.
func (fr *fleetFluxRun) publishTimed(ctx context.Context, generation int, gens map[string]string) (Latency, float64, error) {
	rev, err := fr.fx.publish(ctx, fr.fleet.FluxFiles(generation, true))
	at := time.Now()
	if err != nil {
		return Latency{}, 0, err
	}
	ts, err := fr.watch.wait(ctx, fr.le.Names, gens, at, fr.within())
	l := NewLatency(ts, fr.o.Clusters)
	if err != nil {
		return l, 0, err
	}
	ready, err := fr.waitReady(ctx, rev, at)
	return l, ready.Seconds(), err
}

// rollout publishes both profiles' objects.
func (fr *fleetFluxRun) rollout(ctx context.Context) error {
	var err error
	fr.res.First, fr.res.FirstReadySecs, err = fr.publishTimed(ctx, 0, map[string]string{FleetDriftProfile: "0", FleetKustomizeProfile: "0"})
	fr.o.Logf("fleet flux %d: first rollout p50 %.1fs p99 %.1fs last %.1fs, every Kustomization Ready %.1fs", fr.o.Clusters,
		fr.res.First.P50, fr.res.First.P99, fr.res.First.Last, fr.res.FirstReadySecs)
	return err
}

// change publishes the one-line change of profile fa's objects.
func (fr *fleetFluxRun) change(ctx context.Context) error {
	before, err := fr.le.scrape(ctx)
	if err != nil {
		return err
	}
	fr.res.Change, fr.res.ChangeReadySecs, err = fr.publishTimed(ctx, 1, map[string]string{FleetDriftProfile: "1"})
	fr.o.Logf("fleet flux %d: change p50 %.1fs p99 %.1fs last %.1fs, every Kustomization Ready %.1fs", fr.o.Clusters,
		fr.res.Change.P50, fr.res.Change.P99, fr.res.Change.Last, fr.res.ChangeReadySecs)
	if err != nil {
		return err
	}
	if fr.res.ChangeRequests, err = fr.le.requestsSince(ctx, before); err != nil {
		return err
	}
	fr.res.Converged, err = sampleProc(ctx, fr.fx.ctrl, fr.le.Ports())
	return err
}

// idle counts the API servers' requests and the controller's CPU over the
// idle window.
func (fr *fleetFluxRun) idle(ctx context.Context) error {
	before, err := fr.le.scrape(ctx)
	if err != nil {
		return err
	}
	pid := fr.fx.ctrl.Pid()
	cpu0, err := ProcCPU(pid)
	if err != nil {
		return err
	}
	if err := sleepCtx(ctx, fr.o.Idle); err != nil {
		return err
	}
	cpu1, err := ProcCPU(pid)
	if err != nil {
		return err
	}
	after, err := fr.le.scrape(ctx)
	if err != nil {
		return err
	}
	load := newIdleLoad(before, after, fr.bg, fr.o.Idle.Minutes(), fr.o.Clusters)
	fr.res.IdleRequests, fr.res.IdleWatches, fr.res.IdleOther = load.Rows, load.Watches, load.Other
	fr.res.IdleCPU = (cpu1 - cpu0).Seconds() / fr.o.Idle.Minutes()
	fr.res.Idle, err = sampleProc(ctx, fr.fx.ctrl, fr.le.Ports())
	fr.o.Logf("fleet flux %d: idle %s: %.2f requests per cluster per minute (%.2f watches), CPU %.2fs per minute, RSS %s",
		fr.o.Clusters, fr.o.Idle, fr.res.IdleOther+fr.res.IdleWatches, fr.res.IdleWatches, fr.res.IdleCPU, mib(fr.res.Idle.RSS))
	return err
}
