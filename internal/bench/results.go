package bench

import (
	"math"
	"os"
	"sort"
	"strings"
	"time"
)

// Results is everything one run of the suite measured; results.json holds
// it and REPORT.md is written from it.
type Results struct {
	Started   time.Time          `json:"started"`
	Finished  time.Time          `json:"finished"`
	Machine   Machine            `json:"machine"`
	Options   map[string]string  `json:"options"`
	PhaseSecs map[string]float64 `json:"phaseSeconds"`
	Samples   []Sample           `json:"samples,omitempty"`
	Steady    *SteadyResult      `json:"steady,omitempty"`
	Shard     *ShardResult       `json:"shard,omitempty"`
	Scale     []ScaleResult      `json:"scale,omitempty"`
	PlanCmd   *PlanCmdResult     `json:"planCommand,omitempty"`
	// PlanCmds are `regatta plan` runs over the other fleet styles.
	PlanCmds []*PlanCmdResult `json:"planCommands,omitempty"`
	GoBench  []GoBench        `json:"goBench,omitempty"`
	// Progressive are the rounds of the progressive phase (issue 14).
	Progressive []ProgressiveResult `json:"progressive,omitempty"`
	// Health is the health phase (issue 28): real controllers, Deployments.
	Health *HealthResult `json:"health,omitempty"`
	// Fleet is the fleet phase (issue 37): logical clusters at scale.
	Fleet *FleetResult `json:"fleet,omitempty"`
	// Soak is the soak phase (issue 54): a long run under churn.
	Soak     *SoakResult  `json:"soak,omitempty"`
	Profiles []ProfileTop `json:"profiles,omitempty"`
	Errors   []string     `json:"errors,omitempty"`
	// PhaseRuns name the commit and date each phase's figures were
	// measured at; a phase missing here was measured by this run
	// (Machine.Commit, Started).
	PhaseRuns map[string]PhaseRun `json:"phaseRuns,omitempty"`
}

// PhaseRun is where and when a phase was measured.
type PhaseRun struct {
	Commit string    `json:"commit"`
	Date   time.Time `json:"date"`
	// Later is a figure of this phase measured after Commit whose raw
	// results were not kept (written by hand into results.json): the
	// report shows it beside the phase's figures, so a verdict it
	// contradicts is never read alone. Measuring the phase again drops it.
	Later string `json:"later,omitempty"`
}

// Run returns the commit and date of phase's figures.
func (r *Results) Run(phase string) PhaseRun {
	if pr, ok := r.PhaseRuns[phase]; ok {
		return pr
	}
	return PhaseRun{Commit: r.Machine.Commit, Date: r.Started}
}

// ProfileTop is the head of `go tool pprof -top` of a profile of the run.
type ProfileTop struct {
	What    string `json:"what"`
	Command string `json:"command"`
	Top     string `json:"top"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUs      int    `json:"cpus"`
	MemBytes  int64  `json:"memBytes"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"goVersion"`
	Commit    string `json:"commit"`
	CPUModel  string `json:"cpuModel"`
	// LoadStart and LoadEnd are /proc/loadavg's first three fields.
	LoadStart string `json:"loadStart"`
	LoadEnd   string `json:"loadEnd"`
}

// LoadAverage returns the 1, 5 and 15 minute load averages.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// PlanCmdResult is `regatta plan` over a simulated fleet.
type PlanCmdResult struct {
	Style    string  `json:"style"`
	Clusters int     `json:"clusters"`
	Secs     float64 `json:"seconds"`
	PeakRSS  int64   `json:"peakRSSBytes"`
	Command  string  `json:"command"`
	Note     string  `json:"note,omitempty"`
}

// GoBench is the median of one Go benchmark over -count runs.
type GoBench struct {
	Package     string  `json:"package"`
	Name        string  `json:"name"`
	NsPerOp     float64 `json:"nsPerOp"`
	BytesPerOp  float64 `json:"bytesPerOp"`
	AllocsPerOp float64 `json:"allocsPerOp"`
	Runs        int     `json:"runs"`
}

// Secs returns the seconds of the samples of a method without error.
func (r *Results) Secs(method string) []float64 {
	var out []float64
	for _, s := range r.Samples {
		if s.Method == method && s.Err == "" {
			out = append(out, s.Secs)
		}
	}
	return out
}

// PairedRatios returns, per round where both ran, a's time over b's.
func (r *Results) PairedRatios(a, b string) []float64 {
	byRound := map[int]float64{}
	for _, s := range r.Samples {
		if s.Method == b && s.Err == "" {
			byRound[s.Round] = s.Secs
		}
	}
	var out []float64
	for _, s := range r.Samples {
		if d, ok := byRound[s.Round]; ok && s.Method == a && s.Err == "" && d > 0 {
			out = append(out, s.Secs/d)
		}
	}
	return out
}

// Quantile returns the q-quantile of xs with linear interpolation between
// closest ranks (NaN for none).
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// phaseOptions are the options each phase's command is written from
// (phaseCommand): a kept phase keeps its run's, not this run's defaults.
var phaseOptions = map[string][]string{
	"rollout": {"rounds"},
	"fleet":   {"fleet", "fleetIdle", "fleetDriftInterval", "fleetCalibrate", "fleetFlux", "fleetFluxConcurrent", "fleetPerServer"},
}

// keepOptions copies from old the options of a kept phase.
func (r *Results) keepOptions(old *Results, phase string) {
	for _, k := range phaseOptions[phase] {
		if v, ok := old.Options[k]; ok {
			if r.Options == nil {
				r.Options = map[string]string{}
			}
			r.Options[k] = v
		}
	}
}

// KeepPhases carries over from old, an earlier results.json, the figures
// of the phases this run did not measure, with the commit and date they
// were measured at: the report then shows today's figure of every target.
func (r *Results) KeepPhases(old *Results, ran func(phase string) bool) {
	keep := func(phase string, copyFn func()) {
		if ran(phase) {
			return
		}
		copyFn()
		r.keepOptions(old, phase)
		if r.PhaseRuns == nil {
			r.PhaseRuns = map[string]PhaseRun{}
		}
		r.PhaseRuns[phase] = old.Run(phase)
	}
	keep("rollout", func() { r.Samples = old.Samples })
	keep("daemon", func() { r.Steady = old.Steady })
	keep("scale", func() { r.Scale, r.PlanCmd, r.PlanCmds = old.Scale, old.PlanCmd, old.PlanCmds })
	keep("gobench", func() { r.GoBench = old.GoBench })
	keep("progressive", func() { r.Progressive = old.Progressive })
	keep("health", func() { r.Health = old.Health })
	keep("shard", func() { r.Shard = old.Shard })
	keep("fleet", func() { r.Fleet = old.Fleet })
	keep("soak", func() { r.Soak = old.Soak })
	if ran("fleet") && r.Fleet != nil && old.Fleet != nil {
		r.Fleet.keepFrom(old.Fleet, old.Run("fleet"))
	}
}
