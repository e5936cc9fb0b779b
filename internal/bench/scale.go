package bench

import (
	"context"
	"runtime"
	"testing/fstest"
	"time"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/spec"
)

// ScaleResult is a full match and render plan of a simulated fleet.
type ScaleResult struct {
	// Style is the fleet's style (Styles).
	Style    string `json:"style"`
	Clusters int    `json:"clusters"`
	Profiles int    `json:"profiles"`
	Pairs    int    `json:"pairs"`
	Objects  int    `json:"objects"`
	// Cold is a fresh renderer on the first revision: spec.Load, then
	// plan.Match and render.Render of every pair.
	LoadSecs float64 `json:"loadSeconds"`
	PlanSecs float64 `json:"planSeconds"`
	Hits     uint64  `json:"hits"`
	Misses   uint64  `json:"misses"`
	// PeakRSS is VmHWM after the cold plan; the heap figures are Go's.
	PeakRSS    int64  `json:"peakRSSBytes"`
	HeapSys    uint64 `json:"heapSysBytes"`
	TotalAlloc uint64 `json:"totalAllocBytes"`
	NumGC      uint32 `json:"numGC"`
	// Warm is the same revision again (a drift-interval pass); Change is
	// a new revision in which one overlay of one profile changed.
	WarmSecs     float64 `json:"warmSeconds"`
	ChangeSecs   float64 `json:"changeSeconds"`
	ChangeMisses uint64  `json:"changeMisses"`
}

// RunScale generates a fleet of simulated clusters in a style (Styles)
// and plans it three times: cold, warm, and after a one-file change
// (Fleet.Change). Run it in a process of its own: PeakRSS is the
// process's.
func RunScale(ctx context.Context, clusters, profiles int, style string, chart *ChartRepo, helmCache string) (ScaleResult, error) {
	f := Fleet{Style: style, Prefix: "sim", Clusters: NewClusters(clusters), Profiles: profiles, ChartRepo: chart.URL()}
	files := f.Files()
	fsys := mapFS(files)
	res := ScaleResult{Style: style, Clusters: clusters, Profiles: profiles}
	r := render.New(render.Options{Helm: helm.New(helm.Options{CacheDir: helmCache})})
	runtime.GC()
	start := time.Now()
	repo, diags := spec.Load(fsys)
	if err := diags.Err(); err != nil {
		return res, err
	}
	res.LoadSecs = time.Since(start).Seconds()
	st, err := PlanRepo(ctx, repo, "rev1", r, runtime.GOMAXPROCS(0), nil)
	res.PlanSecs = time.Since(start).Seconds() - res.LoadSecs
	if err != nil {
		return res, err
	}
	res.Pairs, res.Objects, res.Hits, res.Misses = st.Pairs, st.Objects, st.Hits, st.Misses
	readMemStats(&res)
	if res.WarmSecs, _, err = timedPlan(ctx, fsys, "rev1", r); err != nil {
		return res, err
	}
	_, changed := f.Change(files)
	for p, data := range changed {
		files[p] = data
	}
	_, before := r.CacheStats()
	res.ChangeSecs, st, err = timedPlan(ctx, mapFS(files), "rev2", r)
	res.ChangeMisses = st.Misses - before
	return res, err
}

func readMemStats(res *ScaleResult) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeapSys, res.TotalAlloc, res.NumGC = ms.HeapSys, ms.TotalAlloc, ms.NumGC
	if _, hwm, err := procStatus("/proc/self/status"); err == nil {
		res.PeakRSS = hwm
	}
}

// timedPlan loads and plans a revision; it returns the seconds and stats.
func timedPlan(ctx context.Context, fsys fstest.MapFS, rev string, r *render.Renderer) (float64, PlanStats, error) {
	start := time.Now()
	st, err := PlanFleet(ctx, fsys, rev, r, runtime.GOMAXPROCS(0), nil)
	return time.Since(start).Seconds(), st, err
}
