package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Methods compared in the rollout phase.
const (
	MethodRegatta = "regatta"
	MethodChange  = "regatta-change"
	// MethodRestart is a fresh daemon on the fleet the round's daemon
	// applied, unchanged.
	MethodRestart = "regatta-restart"
	// One cluster of ten stuck on an add-on that never becomes healthy: a
	// change of another profile applied on the other clusters, on the
	// stuck one, and recorded on the status branch.
	MethodStuckOthers = "stuck-others"
	MethodStuckOwn    = "stuck-own"
	MethodStuckStatus = "stuck-status"
	MethodLimit       = "limit"
	// MethodFloor is the minimal program with the bookkeeping regatta's
	// guarantees need (Bookkeeping): what no code of regatta's can undercut.
	MethodFloor  = "limit-bookkeeping"
	MethodXargs  = "script-xargs"
	MethodSerial = "script-serial"
)

// RolloutOptions configures the rollout phase.
type RolloutOptions struct {
	Rounds   int
	Clusters int
	Profiles int
	// SerialEvery runs the serial script in every SerialEvery-th round
	// only (it is the slowest and the least interesting); 0 never.
	SerialEvery int
	// Changes is the number of one-overlay commits timed per round.
	Changes int
	Bins    *Binaries
	// SerialTimeout bounds the serial script (it may take minutes on a
	// busy machine); a run that exceeds it is recorded as an error.
	SerialTimeout time.Duration
	// Dir receives logs, trees and kubeconfigs (internal/bench/raw/rollout).
	Dir string
	// Only, when set, restricts the methods (e.g. regatta and limit for a
	// quick comparison).
	Only []string
	// CPUProfile, when set, profiles regatta's first rollout in round 0.
	CPUProfile string
	// APIServerProfile, when set, is the window of a CPU profile of every
	// API server taken from the start of each first rollout (regatta's and
	// the minimal program's), written to the round's folder. It must be
	// longer than the rollout; the round waits for the window to end.
	APIServerProfile time.Duration
	Logf             func(string, ...any)
}

// Sample is one timed measurement.
type Sample struct {
	Phase  string  `json:"phase"`
	Method string  `json:"method"`
	Round  int     `json:"round"`
	Secs   float64 `json:"seconds"`
	// PassSecs is the pass's own duration (regatta only): from reading the
	// revision to the last pair converged, without fetch and status commit.
	PassSecs float64 `json:"passSeconds,omitempty"`
	// Requests are the API requests per cluster during the measurement
	// (apiserver_request_total before and after, averaged over clusters).
	Requests []RequestRow `json:"requests,omitempty"`
	// Revision is the commit a change sample converged on.
	Revision string `json:"revision,omitempty"`
	// CPU is the CPU time the machine's processes used during the
	// measurement, by command name (first rollouts only).
	CPU CPUUse `json:"cpu,omitempty"`
	Err string `json:"error,omitempty"`
}

// rolloutRound is the state of one round.
type rolloutRound struct {
	o     RolloutOptions
	n     int
	dir   string
	cs    *Clusters
	chart *ChartRepo
}

// RunRollout runs the rounds; each round starts fresh clusters and runs
// the methods in an order rotated by the round number.
func RunRollout(ctx context.Context, o RolloutOptions, chart *ChartRepo, out func(Sample)) error {
	for n := range o.Rounds {
		if err := runRound(ctx, o, n, chart, out); err != nil {
			return fmt.Errorf("round %d: %w", n, err)
		}
	}
	return nil
}

func runRound(ctx context.Context, o RolloutOptions, n int, chart *ChartRepo, out func(Sample)) error {
	dir := filepath.Join(o.Dir, fmt.Sprintf("round-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	var flags []string
	if o.APIServerProfile > 0 {
		flags = APIServerProfileFlags
	}
	cs, err := StartClusters(ctx, o.Bins, o.Clusters, filepath.Join(dir, "kubeconfigs"), flags...)
	if err != nil {
		return err
	}
	defer cs.Stop()
	o.Logf("round %d: %d fresh clusters in %s", n, o.Clusters, time.Since(start).Round(time.Second))
	r := &rolloutRound{o: o, n: n, dir: dir, cs: cs, chart: chart}
	for _, m := range r.methods() {
		samples := r.run(ctx, m)
		for _, s := range samples {
			s.Phase, s.Round = "rollout", n
			o.Logf("round %d: %-14s %6.2fs %s", n, s.Method, s.Secs, s.Err)
			if len(s.CPU) > 0 {
				o.Logf("round %d: %-14s cpu: %s", n, s.Method, s.CPU)
			}
			out(s)
		}
	}
	return nil
}

// methods returns the round's methods, rotated by the round number.
func (r *rolloutRound) methods() []string {
	all := []string{MethodRegatta, MethodLimit, MethodFloor, MethodXargs}
	if r.o.SerialEvery > 0 && r.n%r.o.SerialEvery == 0 {
		all = append(all, MethodSerial)
	}
	if len(r.o.Only) > 0 {
		all = slices.DeleteFunc(all, func(m string) bool { return !slices.Contains(r.o.Only, m) })
	}
	k := r.n % max(1, len(all))
	return append(all[k:], all[:k]...)
}

func (r *rolloutRound) run(ctx context.Context, method string) []Sample {
	var samples []Sample
	var err error
	switch method {
	case MethodRegatta:
		samples, err = r.regatta(ctx)
	case MethodLimit:
		samples, err = r.limit(ctx, MethodLimit, "lm")
	case MethodFloor:
		samples, err = r.limit(ctx, MethodFloor, "fl")
	case MethodXargs:
		samples, err = r.script(ctx, MethodXargs, "xa", 10)
	case MethodSerial:
		sctx, cancel := context.WithTimeout(ctx, r.o.SerialTimeout)
		samples, err = r.script(sctx, MethodSerial, "se", 1)
		cancel()
	}
	if err != nil {
		samples = append(samples, Sample{Method: method, Err: err.Error()})
	}
	return samples
}

func (r *rolloutRound) fleet(prefix string) Fleet {
	return Fleet{Prefix: prefix, Clusters: r.cs.Fleet, Profiles: r.o.Profiles, ChartRepo: r.chart.URL()}
}

// apiProfiles starts the API servers' profiles of a method's first
// rollout, when asked for; the function it returns waits for them.
func (r *rolloutRound) apiProfiles(ctx context.Context, method string) func() {
	if r.o.APIServerProfile <= 0 {
		return func() {}
	}
	p := startAPIProfiles(ctx, r.cs, r.dir, "apiserver-"+method, r.o.APIServerProfile)
	return func() { p.wait(r.o.Logf) }
}

// requests sums apiserver_request_total over the round's clusters.
func (r *rolloutRound) requests(ctx context.Context) RequestCounts {
	sum := RequestCounts{}
	for _, c := range r.cs.Fleet {
		rc, err := ScrapeRequests(ctx, r.cs.Cluster(c.Name).RESTConfig())
		if err != nil {
			r.o.Logf("round %d: cluster %s: metrics: %v", r.n, c.Name, err)
			continue
		}
		sum.Add(rc)
	}
	return sum
}

// perCluster turns the difference of two sums into rows per cluster.
func (r *rolloutRound) perCluster(before, after RequestCounts) []RequestRow {
	return after.Sub(before).Scale(1 / float64(len(r.cs.Fleet))).Rows()
}

// verify checks every cluster holds the fleet's objects.
func (r *rolloutRound) verify(ctx context.Context, f Fleet) error {
	for _, c := range f.Clusters {
		if err := Verify(ctx, r.cs.Cluster(c.Name).RESTConfig(), f); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	return nil
}
