package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
)

// SteadyOptions configures the daemon phase.
type SteadyOptions struct {
	Clusters, Profiles int
	Bins               *Binaries
	DriftInterval      time.Duration
	// Intervals is the number of drift intervals the idle window spans.
	Intervals int
	// DriftSamples is the number of out-of-band edits and deletes timed.
	DriftSamples int
	Dir          string
	Logf         func(string, ...any)
	// Args are more flags of both `regatta run` processes (experiments:
	// -daemon-args).
	Args []string
}

// SteadyResult is what the daemon phase measured.
type SteadyResult struct {
	Clusters      int     `json:"clusters"`
	Profiles      int     `json:"profiles"`
	ManagedKinds  int     `json:"managedKinds"`
	DriftInterval float64 `json:"driftIntervalSeconds"`
	Intervals     int     `json:"intervals"`
	// FirstPassSecs is from starting `regatta run` to its first converged
	// pass (a first rollout through the real binary and its status commit).
	FirstPassSecs float64 `json:"firstPassSeconds"`
	// Regatta are requests per managed cluster per drift interval, the
	// control cluster's own background subtracted; Control is that
	// background (an API server no one talks to).
	Regatta []RequestRow `json:"regatta"`
	Control []RequestRow `json:"control"`
	// Writes and Reads total the Regatta rows of the kinds of request the
	// control cluster does not make itself (its lease renewals, say, whose
	// count in a window jitters by one).
	Writes float64     `json:"writes"`
	Reads  float64     `json:"reads"`
	Drift  []DriftTime `json:"drift"`
	Memory Memory      `json:"memory"`
	// IdleCPUSecs is the CPU time `regatta run` used per drift interval
	// of the idle window (its whole fleet, all clusters).
	IdleCPUSecs float64 `json:"idleCpuSecondsPerInterval"`
}

// Memory is the resident memory of `regatta run`.
type Memory struct {
	RSS int64 `json:"rssBytes"`
	HWM int64 `json:"hwmBytes"`
	// Anon is the anonymous part of RSS (heap, stacks, data); the rest
	// is the binary's pages.
	Anon      int64 `json:"rssAnonBytes,omitempty"`
	HeapInuse int64 `json:"heapInuseBytes"`
	// StackInuse, NextGC and GoSys are the Go runtime's own figures.
	StackInuse int64 `json:"stackInuseBytes,omitempty"`
	NextGC     int64 `json:"nextGCBytes,omitempty"`
	GoSys      int64 `json:"goSysBytes,omitempty"`
	// CPUSecs is the CPU time `regatta run` used from its start to the
	// reading (the first rollout, the idle window, the drift samples).
	CPUSecs float64 `json:"cpuSeconds,omitempty"`
	// WorkersRSS and Workers are regatta's child processes (chart render
	// workers) at the same moment: what the daemon holds besides RSS.
	WorkersRSS int64 `json:"workersRssBytes"`
	Workers    int   `json:"workers"`
	RSSOne     int64 `json:"rssOneClusterBytes,omitempty"`
	HeapOne    int64 `json:"heapInuseOneClusterBytes,omitempty"`
	ClustersIn int   `json:"clusters"`
}

// Total is what the daemon holds resident: its own RSS and its workers'.
func (m Memory) Total() int64 { return m.RSS + m.WorkersRSS }

// steady is the state of the daemon phase.
type steady struct {
	o     SteadyOptions
	cs    *Clusters
	ctl   *rest.Config
	fleet Fleet
	child *Child
}

// RunSteady starts fresh clusters (and a control cluster regatta never
// talks to), runs `regatta run` on a generated fleet, and measures its
// idle requests, drift correction latency and memory.
func RunSteady(ctx context.Context, o SteadyOptions, chart *ChartRepo) (*SteadyResult, error) {
	cs, err := StartClusters(ctx, o.Bins, o.Clusters+1, filepath.Join(o.Dir, "kubeconfigs"))
	if err != nil {
		return nil, err
	}
	defer cs.Stop()
	ctl := cs.Fleet[o.Clusters]
	s := &steady{o: o, cs: cs, ctl: cs.Cluster(ctl.Name).RESTConfig(),
		fleet: Fleet{Prefix: "st", Clusters: cs.Fleet[:o.Clusters], Profiles: o.Profiles, ChartRepo: chart.URL()}}
	res := &SteadyResult{Clusters: o.Clusters, Profiles: o.Profiles, ManagedKinds: len(benchKinds) + 1,
		DriftInterval: o.DriftInterval.Seconds(), Intervals: o.Intervals}
	if err := s.start(ctx, res); err != nil {
		return res, err
	}
	defer s.child.Stop()
	if err := s.idle(ctx, res); err != nil {
		return res, err
	}
	if res.Drift, err = s.drift(ctx); err != nil {
		return res, err
	}
	return res, s.memory(ctx, res)
}

// start commits the fleet and starts `regatta run`, timing its first pass.
func (s *steady) start(ctx context.Context, res *SteadyResult) error {
	g, err := StartGitRepo(ctx, filepath.Join(s.o.Dir, "git"))
	if err != nil {
		return err
	}
	context.AfterFunc(ctx, g.Close)
	if _, err := g.Commit(ctx, "fleet", s.fleet.Files()); err != nil {
		return err
	}
	begin := time.Now()
	s.child, err = StartChild(ChildOptions{Regatta: s.o.Bins.Regatta, RepoURL: g.URL(), DriftInterval: s.o.DriftInterval,
		Dir: filepath.Join(s.o.Dir, "regatta"), ChartRepo: s.fleet.ChartRepo, Args: s.o.Args})
	if err != nil {
		return err
	}
	if err := s.child.WaitPasses(ctx, 1, 1, 10*time.Minute, 100*time.Millisecond); err != nil {
		return err
	}
	res.FirstPassSecs = time.Since(begin).Seconds()
	s.o.Logf("daemon: regatta run converged in %.1fs", res.FirstPassSecs)
	for _, c := range s.fleet.Clusters {
		if err := Verify(ctx, s.cs.Cluster(c.Name).RESTConfig(), s.fleet); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	return nil
}

// idlePoll is how often waits in the idle window poll the daemon's
// metrics: ten times per drift interval.
func (s *steady) idlePoll() time.Duration { return s.o.DriftInterval / 10 }

// idle waits for a drift pass to finish, then counts every API server's
// requests over the next Intervals drift passes.
func (s *steady) idle(ctx context.Context, res *SteadyResult) error {
	_, total, err := s.child.Passes(ctx)
	if err != nil {
		return err
	}
	wait := s.o.DriftInterval*time.Duration(s.o.Intervals+2) + time.Minute
	if err := s.child.WaitPasses(ctx, total+1, 0, wait, s.idlePoll()); err != nil {
		return err
	}
	before, ctlBefore, err := s.scrapeAll(ctx)
	if err != nil {
		return err
	}
	cpuBefore, err := ProcCPU(s.child.Pid())
	if err != nil {
		return err
	}
	if err := s.child.WaitPasses(ctx, total+1+float64(s.o.Intervals), 0, wait, s.idlePoll()); err != nil {
		return err
	}
	cpuAfter, err := ProcCPU(s.child.Pid())
	if err != nil {
		return err
	}
	res.IdleCPUSecs = (cpuAfter - cpuBefore).Seconds() / float64(s.o.Intervals)
	after, ctlAfter, err := s.scrapeAll(ctx)
	if err != nil {
		return err
	}
	control := ctlAfter.Sub(ctlBefore).Scale(1 / float64(s.o.Intervals))
	per := after.Sub(before).Scale(1 / float64(s.o.Intervals*s.o.Clusters)).Sub(control)
	res.Regatta, res.Control = per.Rows(), control.Rows()
	res.Writes, res.Reads = per.Own(control).Totals()
	s.o.Logf("daemon: per cluster per drift interval: %.1f writes, %.1f reads; the daemon's CPU per interval: %.2f s",
		res.Writes, res.Reads, res.IdleCPUSecs)
	return nil
}

// scrapeAll sums the managed clusters' request counts and reads the
// control cluster's.
func (s *steady) scrapeAll(ctx context.Context) (RequestCounts, RequestCounts, error) {
	sum := RequestCounts{}
	for _, c := range s.fleet.Clusters {
		rc, err := ScrapeRequests(ctx, s.cs.Cluster(c.Name).RESTConfig())
		if err != nil {
			return nil, nil, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		sum.Add(rc)
	}
	ctl, err := ScrapeRequests(ctx, s.ctl)
	return sum, ctl, err
}

// Totals returns the writes and reads of the Regatta rows, leaving out the
// kinds of request the control API server makes itself.
func (s *SteadyResult) Totals() (writes, reads float64) {
	own, ctl := RequestCounts{}, RequestCounts{}
	for _, r := range s.Control {
		ctl[r.RequestKey] = r.Count
	}
	for _, r := range s.Regatta {
		own[r.RequestKey] = r.Count
	}
	return own.Own(ctl).Totals()
}
