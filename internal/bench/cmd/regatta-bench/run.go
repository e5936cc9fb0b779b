package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/regatta-dev/regatta/internal/bench"
)

// options are the command's flags.
type options struct {
	phases       string
	methods      string
	rounds       int
	serialEvery  int
	changes      int
	clusters     int
	profiles     int
	scaleSizes   string
	scaleStyles  string
	planClusters int
	benchCount   int
	shardLease   time.Duration
	binDir       string
	raw          string
	results      string
	report       string
	reportOnly   bool
	daemonArgs   string
	profile      bool
	apiProfile   time.Duration
	health       healthFlags
	fleet        fleetFlags
	soak         soakFlags
}

func (o *options) register(fs *flag.FlagSet) {
	fs.StringVar(&o.phases, "phases", "rollout,daemon,progressive,health,shard,scale,gobench,fleet", "phases to run, comma-separated: rollout, daemon, progressive, health, shard, scale, gobench, fleet, soak (not in the default: hours)")
	fs.StringVar(&o.methods, "methods", "", "rollout methods to run, comma-separated (default: all)")
	fs.IntVar(&o.rounds, "rounds", 5, "rollout rounds (fresh clusters each); the progressive phase runs at most 3 (~45 s each)")
	fs.IntVar(&o.serialEvery, "serial-every", 2, "run the serial script every n-th round (0: never)")
	fs.IntVar(&o.changes, "changes", 2, "one-overlay commits timed per round")
	fs.IntVar(&o.clusters, "clusters", 10, "real clusters")
	fs.IntVar(&o.profiles, "profiles", 10, "profiles per cluster")
	fs.StringVar(&o.scaleSizes, "scale", "1000,10000", "simulated fleet sizes of the scale phase (\"\": none, only `regatta plan`)")
	fs.StringVar(&o.scaleStyles, "scale-styles", strings.Join(bench.DefaultStyles, ","), "fleet styles of the scale phase (each size and `regatta plan` over 1,000 clusters): "+strings.Join(bench.Styles, ", ")+" (template-name renders every pair apart: slow)")
	fs.IntVar(&o.planClusters, "plan-clusters", 1000, "clusters of the fleet `regatta plan` is timed over (scale phase)")
	fs.IntVar(&o.benchCount, "bench-count", 5, "go test -count of the Go benchmarks")
	fs.DurationVar(&o.shardLease, "shard-lease", 15*time.Second, "membership lease duration of the shard phase's replicas")
	fs.StringVar(&o.binDir, "bin", "bin", "folder with regatta and kubectl")
	fs.StringVar(&o.raw, "raw", "internal/bench/raw", "folder for raw outputs (git-ignored)")
	fs.StringVar(&o.results, "results", "internal/bench/results", "folder for the committed raw numbers")
	fs.StringVar(&o.report, "report", "internal/bench/REPORT.md", "report to write")
	fs.StringVar(&o.daemonArgs, "daemon-args", "", "more flags of the daemon phase's `regatta run` processes, space-separated (experiments, e.g. \"--memory-limit 48Mi\")")
	fs.BoolVar(&o.reportOnly, "report-only", false, "rewrite the report from <results>/results.json")
	fs.DurationVar(&o.apiProfile, "apiserver-profile", 0, "profile every API server's CPU over this window from the start of each first rollout (regatta's and the minimal program's; profiles in <raw>/rollout/round-N); longer than a rollout, which then waits for the window to end")
	o.health.register(fs)
	o.fleet.register(fs)
	o.soak.register(fs)
	fs.BoolVar(&o.profile, "rollout-profile", false, "profile regatta's first rollout of round 0 (CPU, block and mutex profiles in <raw>); "+
		"the profilers slow that rollout, so its ratios are not comparable")
}

func (o *options) has(phase string) bool { return slices.Contains(strings.Split(o.phases, ","), phase) }

func run(ctx context.Context, args []string) error {
	o := &options{}
	fs := flag.NewFlagSet("regatta-bench", flag.ContinueOnError)
	o.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	log.SetOutput(io.Discard) // the Git server logs every request
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard()) // client-go's notes on cancelled requests
	if o.reportOnly {
		return rewriteReport(o)
	}
	for _, d := range []string{o.raw, o.results} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	res := newResults(o)
	err := runPhases(ctx, o, res)
	res.Finished = time.Now()
	res.Machine.LoadEnd = bench.LoadAverage()
	res.Profiles = profileTops(context.WithoutCancel(ctx), o)
	if werr := writeOutputs(o, res); werr != nil && err == nil {
		err = werr
	}
	return err
}

// shared is what the phases share: the chart repository and the binaries.
type shared struct {
	chart *bench.ChartRepo
	bins  *bench.Binaries
}

func runPhases(ctx context.Context, o *options, res *bench.Results) error {
	chart, err := bench.StartChartRepo(filepath.Join(o.raw, "charts"))
	if err != nil {
		return err
	}
	defer chart.Close()
	sh := &shared{chart: chart}
	if o.has("rollout") || o.has("daemon") || o.has("progressive") || o.has("shard") || o.has("health") || o.has("fleet") || o.has("soak") {
		if sh.bins, err = bench.StageBinaries(o.binDir); err != nil {
			return err
		}
		defer sh.bins.Remove()
	}
	if o.has("health") {
		if err := sh.bins.StageControlPlane(o.binDir); err != nil {
			return err
		}
	}
	phases := []struct {
		name string
		fn   func(context.Context, *options, *bench.Results, *shared) error
	}{
		{"gobench", runGoBench}, {"scale", runScale}, {"rollout", runRollout}, {"daemon", runDaemon},
		{"progressive", runProgressive}, {"health", runHealth}, {"shard", runShard}, {"fleet", runFleet},
		{"soak", runSoak},
	}
	for _, p := range phases {
		if !o.has(p.name) {
			continue
		}
		// A phase's raw folder holds Git repositories and trees of the
		// last run: start afresh.
		if err := os.RemoveAll(filepath.Join(o.raw, p.name)); err != nil {
			return err
		}
		start := time.Now()
		logf("phase %s", p.name)
		err := p.fn(ctx, o, res, sh)
		res.PhaseSecs[p.name] = time.Since(start).Seconds()
		if err != nil {
			res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", p.name, err))
			logf("phase %s failed: %v", p.name, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func runRollout(ctx context.Context, o *options, res *bench.Results, sh *shared) error {
	ro := bench.RolloutOptions{Rounds: o.rounds, Clusters: o.clusters, Profiles: o.profiles,
		SerialEvery: o.serialEvery, Changes: o.changes, Bins: sh.bins, Only: splitList(o.methods), SerialTimeout: 4 * time.Minute,
		Dir: abs(filepath.Join(o.raw, "rollout")), Logf: logf}
	ro.APIServerProfile = o.apiProfile
	if o.profile {
		ro.CPUProfile = filepath.Join(o.raw, "rollout-regatta.cpu.pprof")
	}
	return bench.RunRollout(ctx, ro, sh.chart, func(s bench.Sample) { res.Samples = append(res.Samples, s) })
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// maxProgressiveRounds keeps the progressive phase within ~2-3 minutes of
// make bench.
const maxProgressiveRounds = 3

// runProgressive times a progressive rollout on 9 fresh clusters in 3
// stages, -rounds times (at most maxProgressiveRounds).
func runProgressive(ctx context.Context, o *options, res *bench.Results, sh *shared) error {
	po := bench.ProgressiveOptions{Rounds: min(o.rounds, maxProgressiveRounds), Bins: sh.bins, Soak: time.Second,
		Dir: abs(filepath.Join(o.raw, "progressive")), Logf: logf}
	return bench.RunProgressive(ctx, po, func(p bench.ProgressiveResult) { res.Progressive = append(res.Progressive, p) })
}
