package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"
)

// The soak phase (issue 54): `regatta run` on a fleet of logical clusters
// (the fleet phase's environment, repository and child process) for a long
// time under a workload of commits, drift, API servers restarting, a
// server unreachable and the Git host down, sampled at a fixed period; the
// verdict is each series' slope after the warm-up, plus checks that every
// commit converged, no status record went missing or back, and nothing
// was applied twice.

// SoakOptions configures the soak phase.
type SoakOptions struct {
	// Clusters are the logical clusters (one of them the spare a commit
	// adds and removes); PerServer how many share an API server (at least
	// two servers run: one restarted, one made unreachable).
	Clusters, PerServer int
	// Objects per profile (two profiles per cluster).
	Objects int
	// Duration of the workload after the first rollout.
	Duration time.Duration
	// CommitEvery, DriftEvery and SampleEvery are the workload's and the
	// sampler's periods; Outage how long a server is unreachable and the
	// Git host down.
	CommitEvery, DriftEvery, SampleEvery, Outage time.Duration
	// EventEvery is how often an event resource is created (and deleted
	// once regatta deployed its instance; 0: never).
	EventEvery time.Duration
	// DriftInterval is regatta's --drift-interval.
	DriftInterval time.Duration
	SetupWorkers  int
	Bins          *Binaries
	Dir           string
	Logf          func(string, ...any)
	// Args are more flags of `regatta run`.
	Args []string
}

// SoakResult is what the soak phase measured.
type SoakResult struct {
	Clusters  int      `json:"clusters"`
	Servers   int      `json:"apiServers"`
	Objects   int      `json:"objectsPerCluster"`
	Args      []string `json:"regattaArgs,omitempty"`
	Secs      float64  `json:"seconds"`
	CommitSec float64  `json:"commitEverySeconds"`
	DriftSec  float64  `json:"driftEverySeconds"`
	SampleSec float64  `json:"sampleEverySeconds"`
	OutageSec float64  `json:"outageSeconds"`
	// First is the first rollout (commit → every cluster has both
	// profiles), before the soak's clock starts.
	First    Latency      `json:"firstRollout"`
	Samples  []SoakSample `json:"samples"`
	Trends   []Trend      `json:"trends"`
	Timeline []SoakEvent  `json:"timeline"`
	EventRes SoakEvents   `json:"eventResources"`
	Commits  []SoakCommit `json:"commits"`
	Drift    SoakDrift    `json:"drift"`
	Status   SoakStatus   `json:"status"`
	Applies  SoakApplies  `json:"applies"`
	Checks   []SoakCheck  `json:"checks"`
	Err      string       `json:"error,omitempty"`
	mu       sync.Mutex   `json:"-"`
	start    time.Time    `json:"-"`
}

// SoakEvent is a disruption of the workload: what, and when from the
// soak's start.
type SoakEvent struct {
	At   float64 `json:"atSeconds"`
	What string  `json:"what"`
}

// SoakCheck is one correctness check of the soak: its name, whether it
// held and the figure behind it.
type SoakCheck struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// event records a disruption.
func (r *SoakResult) event(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Timeline = append(r.Timeline, SoakEvent{At: time.Since(r.start).Seconds(), What: what})
}

// soakRun is the state of the soak phase's run.
type soakRun struct {
	o    SoakOptions
	fr   *fleetRun
	res  *SoakResult
	repo *soakRepo
	st   *statusWatch
}

// RunSoak starts the fleet's API servers and namespace users, `regatta run`
// through its first rollout, then the workload and the sampler for
// o.Duration, and judges the series and the checks.
func RunSoak(ctx context.Context, o SoakOptions) (*SoakResult, error) {
	fo := o.fleetOptions()
	servers := max(2, ServersFor(o.Clusters, fo.PerServer))
	fo.PerServer = (o.Clusters + servers - 1) / servers
	res := &SoakResult{Clusters: o.Clusters, Servers: servers, Objects: 2 * o.Objects, Args: o.Args,
		Secs: o.Duration.Seconds(), CommitSec: o.CommitEvery.Seconds(), DriftSec: o.DriftEvery.Seconds(),
		SampleSec: o.SampleEvery.Seconds(), OutageSec: o.Outage.Seconds(), EventRes: SoakEvents{perCluster: map[string]float64{}}}
	le, _, _, err := startFleetEnv(ctx, fo, servers, regattaNamespace)
	if err != nil {
		return res, err
	}
	defer le.Stop()
	o.Logf("soak: %d logical clusters on %d API servers", o.Clusters, servers)
	repo := newSoakRepo(le.Names, o.Objects)
	fr := &fleetRun{o: fo, le: le, res: &FleetRun{Clusters: o.Clusters}, fleet: repo.fleet()}
	defer fr.stop()
	s := &soakRun{o: o, fr: fr, res: res, repo: repo, st: newStatusWatch()}
	if err := fr.start(ctx); err != nil {
		return res, err
	}
	if err := fr.rollout(ctx); err != nil {
		return res, err
	}
	res.First = fr.res.First
	err = s.soak(ctx)
	// Judged even when the workload failed or the run was interrupted:
	// the readings so far are the run's evidence.
	s.judge(context.WithoutCancel(ctx))
	return res, err
}

// fleetOptions are the fleet phase's options the soak's environment and
// child process are started with: regatta polls the repository at its
// default interval (the Git host's outage then shows) and keeps its clone
// on disk (its size is a series).
func (o SoakOptions) fleetOptions() FleetOptions {
	perServer := o.PerServer
	if perServer <= 0 {
		perServer = 250
	}
	args := append([]string{"--interval", "30s", "--cache-dir", filepath.Join(o.Dir, "cache")}, o.Args...)
	return FleetOptions{Clusters: o.Clusters, PerServer: perServer, Objects: o.Objects, DriftInterval: o.DriftInterval,
		Background: 5 * time.Second, SetupWorkers: o.SetupWorkers, Bins: o.Bins, Dir: o.Dir, Logf: o.Logf, Args: args}
}

// soak runs the workload's loops and the sampler until o.Duration has
// passed; the commit loop's error (a commit that did not converge) ends it.
func (s *soakRun) soak(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.o.Duration)
	defer cancel()
	s.res.start = time.Now()
	s.res.event(fmt.Sprintf("workload starts: commit every %s, drift every %s", s.o.CommitEvery, s.o.DriftEvery))
	var wg sync.WaitGroup
	var commitErr error
	wg.Go(func() { s.sample(ctx) })
	wg.Go(func() { s.drift(ctx) })
	wg.Go(func() { s.disrupt(ctx) })
	if s.o.EventEvery > 0 {
		wg.Go(func() { s.events(ctx) })
	}
	wg.Go(func() { commitErr = s.commits(ctx) })
	wg.Wait()
	if commitErr != nil && ctx.Err() == nil {
		return commitErr
	}
	return nil
}

// disrupt restarts the first API server at 30% of the run, stops the last
// one for o.Outage at 45% (its logical clusters unreachable) and takes the
// Git host down for o.Outage at 70%.
func (s *soakRun) disrupt(ctx context.Context) {
	at := func(f float64) bool {
		return sleepCtx(ctx, time.Until(s.res.start.Add(time.Duration(f*float64(s.o.Duration))))) == nil
	}
	servers := s.fr.le.Servers
	if !at(0.3) {
		return
	}
	s.restartServer(ctx, 0, 0)
	if !at(0.45) {
		return
	}
	s.restartServer(ctx, len(servers)-1, s.o.Outage)
	if !at(0.7) {
		return
	}
	s.res.event("Git host down")
	s.fr.git.SetDown(true)
	_ = sleepCtx(ctx, s.o.Outage)
	s.fr.git.SetDown(false)
	s.res.event("Git host back")
}

// restartServer stops API server i, waits down, and starts it again.
func (s *soakRun) restartServer(ctx context.Context, i int, down time.Duration) {
	srv := s.fr.le.Servers[i]
	s.res.event(fmt.Sprintf("API server %s stopped (%d logical clusters unreachable)", srv.Name(), s.repo.on(i, len(s.fr.le.Servers))))
	srv.Stop()
	_ = sleepCtx(ctx, down)
	// Started even when the run ends meanwhile: the environment stops it.
	if err := srv.Start(context.WithoutCancel(ctx), ""); err != nil {
		s.res.event(fmt.Sprintf("API server %s failed to start: %v", srv.Name(), err))
		return
	}
	s.res.event(fmt.Sprintf("API server %s back", srv.Name()))
}
