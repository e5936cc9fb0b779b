package bench

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/render"
)

// TestFleetFluxFilesSameObjects: Flux's artifact, built with each
// cluster's postBuild substitution (regatta's implementation of Flux's
// postBuild), gives every cluster exactly the objects regatta's two
// profiles render for it, at both generations; the empty tree builds
// nothing.
func TestFleetFluxFilesSameObjects(t *testing.T) {
	f := ScaleFleet{Clusters: []string{LogicalName(0), LogicalName(7)}, Objects: 5}
	for _, gen := range []int{0, 1} {
		want := renderedByCluster(t, f.Files(gen, true), "")
		got := renderedByCluster(t, fluxAsProfile(f, f.FluxFiles(gen, true)), "flux")
		for _, c := range f.Clusters {
			if len(want[c]) != 2*f.Objects {
				t.Fatalf("generation %d, %s: regatta renders %d objects, want %d", gen, c, len(want[c]), 2*f.Objects)
			}
			if !reflect.DeepEqual(got[c], want[c]) {
				t.Errorf("generation %d, %s: Flux's objects differ from regatta's:\nFlux:    %v\nregatta: %v", gen, c, got[c], want[c])
			}
		}
	}
	if got := renderedByCluster(t, fluxAsProfile(f, f.FluxFiles(0, false)), "flux"); len(got[f.Clusters[0]]) != 0 {
		t.Errorf("the empty artifact builds %d objects", len(got[f.Clusters[0]]))
	}
}

// fluxAsProfile is the fleet's clusters with one profile doing what each
// cluster's Kustomization does with the Flux artifact: build its folder,
// substitute ${ns}.
func fluxAsProfile(f ScaleFleet, artifact map[string]string) map[string]string {
	files := f.Files(0, false)
	for k, v := range artifact {
		files[k] = v
	}
	files["profiles/flux.yaml"] = profileDoc("flux", "Continuous",
		"  - name: app\n    kustomize: {path: "+fluxFleetPath+"}\n    postBuild:\n      substitute: {ns: \"s-{{ .Cluster.Name }}\"}\n")
	return files
}

// renderedByCluster renders a repository and returns, per cluster, its
// objects (of profile only, when not empty) by kind/namespace/name.
func renderedByCluster(t *testing.T, files map[string]string, profile string) map[string]map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]map[string]any{}
	r := render.New(render.Options{})
	_, err := PlanFleet(context.Background(), mapFS(files), "rev1", r, 1, func(c string, res []*render.Result) {
		if out[c] == nil {
			out[c] = map[string]map[string]any{}
		}
		for _, x := range res {
			if profile != "" && x.Profile != profile {
				continue
			}
			for _, o := range x.Objects() {
				out[c][o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = o.UnstructuredContent()
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFleetFluxKustomizations: one Kustomization per cluster, named after
// it, reaching it through its kubeconfig Secret, confined to its namespace
// and substituting it.
func TestFleetFluxKustomizations(t *testing.T) {
	f := ScaleFleet{Clusters: []string{LogicalName(0), LogicalName(1), LogicalName(2)}, Objects: 5}
	ks := f.FluxKustomizations()
	if len(ks) != 3 {
		t.Fatalf("%d Kustomizations, want 3", len(ks))
	}
	for i, k := range ks {
		c := f.Clusters[i]
		str := func(path ...string) string {
			s, _, _ := unstructured.NestedString(k.Object, path...)
			return s
		}
		got := []string{k.GetName(), k.GetNamespace(), str("spec", "kubeConfig", "secretRef", "name"), str("spec", "targetNamespace"),
			str("spec", "postBuild", "substitute", "ns"), str("spec", "path"), str("spec", "sourceRef", "name"), str("spec", "interval")}
		want := []string{c, fluxNamespace, c + "-kubeconfig", LogicalNamespace(c), LogicalNamespace(c), "./fleet", "fleet", FluxInterval.String()}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Kustomization %d: %v, want %v", i, got, want)
		}
		if k.GroupVersionKind() != kustomizationGVK {
			t.Errorf("Kustomization %d: %v", i, k.GroupVersionKind())
		}
	}
}

// TestFluxTarget: met when regatta is faster (first rollout and change,
// last cluster) and smaller (idle RSS) at 100 and 500; missed when Flux
// wins one figure at one size; not measured when a size lacks a method or
// regatta's row is carried over from an earlier run.
func TestFluxTarget(t *testing.T) {
	reg := func(n int, last float64, rss int64) FleetRun {
		return FleetRun{Clusters: n, First: Latency{Clusters: n, Last: last}, Change: Latency{Clusters: n, Last: last / 2}, Idle: ProcSample{RSS: rss}}
	}
	fx := func(n int, last float64, rss int64) FleetFluxRun {
		return FleetFluxRun{Clusters: n, First: Latency{Clusters: n, Last: last}, Change: Latency{Clusters: n, Last: last / 2}, Idle: ProcSample{RSS: rss}}
	}
	f := &FleetResult{Runs: []FleetRun{reg(100, 7, 160<<20), reg(500, 50, 520<<20)},
		Flux: []FleetFluxRun{fx(100, 20, 200<<20), fx(500, 90, 600<<20)}}
	if tg := fluxTargets(f)[0]; tg.verdict() != "**met**" || !strings.Contains(tg.figure, "500: first rollout last 50.00 s vs 90.00 s (1.80×)") {
		t.Errorf("regatta ahead everywhere: %s %s", tg.verdict(), tg.figure)
	}
	if tg := fluxTargets(f)[1]; tg.verdict() != "not measured" {
		t.Errorf("no run without drift watches: %s", tg.verdict())
	}
	f.Flux[1].Idle.RSS = 500 << 20
	if tg := fluxTargets(f)[0]; tg.verdict() != "**missed**" || !strings.HasPrefix(tg.figure, "faster at both: yes; smaller at both: no.") {
		t.Errorf("Flux smaller at 500: %s %s", tg.verdict(), tg.figure)
	}
	// Like for like: regatta without drift watches is judged on its own rows.
	f.NoWatches = []FleetRun{reg(100, 8, 90<<20), reg(500, 55, 150<<20)}
	if tg := fluxTargets(f)[1]; tg.verdict() != "**met**" || !strings.Contains(tg.figure, "idle RSS 150.0 MiB vs 500.0 MiB") {
		t.Errorf("regatta without drift watches smaller: %s %s", tg.verdict(), tg.figure)
	}
	f.NoWatches = nil
	f.Flux[1].Idle.RSS = 600 << 20
	f.Runs[0].Change.Missing = 1
	if tg := fluxTargets(f)[0]; tg.verdict() != "**missed**" {
		t.Errorf("regatta missing a cluster at 100: %s", tg.verdict())
	}
	f.Runs[0].Change.Missing = 0
	f.Runs[1].Measured = &PhaseRun{Commit: "abc"}
	if tg := fluxTargets(f)[0]; tg.verdict() != "not measured" {
		t.Errorf("regatta's 500 from an earlier run: %s", tg.verdict())
	}
	// All four carried over from one earlier run: still one run's figures.
	earlier := &PhaseRun{Commit: "abc", Date: time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC)}
	for i := range f.Runs {
		f.Runs[i].Measured, f.Flux[i].Measured = earlier, earlier
	}
	if tg := fluxTargets(f)[0]; tg.verdict() != "**met**" || !strings.Contains(tg.figure, "(measured at `abc`, 2026-12-03)") {
		t.Errorf("both sizes of one earlier run: %s %s", tg.verdict(), tg.figure)
	}
	f.Flux[1].Measured = &PhaseRun{Commit: "abc", Date: earlier.Date.Add(time.Hour)}
	if tg := fluxTargets(f)[0]; tg.verdict() != "not measured" {
		t.Errorf("Flux's 500 from another run: %s", tg.verdict())
	}
	for i := range f.Runs {
		f.Runs[i].Measured, f.Flux[i].Measured = nil, nil
	}
	f.Flux = f.Flux[:1]
	if tg := fluxTargets(f)[0]; tg.verdict() != "not measured" {
		t.Errorf("no Flux at 500: %s", tg.verdict())
	}
	if tg := fluxTargets(nil)[0]; tg.verdict() != "not measured" {
		t.Errorf("no fleet phase: %s", tg.verdict())
	}
}

// TestFleetKeepFrom: a run of some sizes keeps the earlier run's other
// sizes, Flux runs, calibration and shard run, marked with its commit and
// date, sorted for the curves; what this run measured is never replaced.
func TestFleetKeepFrom(t *testing.T) {
	at := PhaseRun{Commit: "0c2ba38", Date: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)}
	older := &PhaseRun{Commit: "1111111"}
	old := &FleetResult{
		Runs: []FleetRun{{Clusters: 100, StartSecs: 1}, {Clusters: 1000}, {Clusters: 1000, Args: []string{"--concurrency", "40"}},
			{Clusters: 2000, Measured: older}},
		Flux:        []FleetFluxRun{{Clusters: 100, StartSecs: 1}, {Clusters: 1000}},
		Calibration: []FleetRun{{Clusters: 10}, {Clusters: 10}},
		Shard:       &FleetShard{Clusters: 2000},
	}
	f := &FleetResult{Runs: []FleetRun{{Clusters: 500}, {Clusters: 100, StartSecs: 2}}, Flux: []FleetFluxRun{{Clusters: 500}, {Clusters: 100, StartSecs: 2}}}
	f.keepFrom(old, at)
	var got []string
	for _, r := range f.Runs {
		got = append(got, strings.TrimSpace(strings.Join(append([]string{strconv.Itoa(r.Clusters)}, r.Args...), " ")+measuredNote(r.Measured)))
	}
	want := []string{"100", "500", "1000 (measured at `0c2ba38`, 2026-12-03)", "2000 (measured at `1111111`, 0001-01-01)",
		"1000 --concurrency 40 (measured at `0c2ba38`, 2026-12-03)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("runs:\n%q\nwant\n%q", got, want)
	}
	if f.Runs[0].StartSecs != 2 || f.Flux[0].StartSecs != 2 || f.Flux[0].Measured != nil {
		t.Errorf("this run's 100 replaced: %+v %+v", f.Runs[0], f.Flux[0])
	}
	if len(f.Flux) != 3 || f.Flux[2].Clusters != 1000 || f.Flux[2].Measured == nil {
		t.Errorf("Flux runs: %+v", f.Flux)
	}
	if len(f.Calibration) != 2 || f.Calibration[1].Measured == nil || f.Shard == nil || f.Shard.Measured == nil || old.Shard.Measured != nil {
		t.Errorf("calibration %+v, shard %+v (old %+v)", f.Calibration, f.Shard, old.Shard)
	}
	idle := func(rs ...FleetRun) []FleetRun {
		for i := range rs {
			rs[i].Idle.RSS = int64(rs[i].Clusters) << 20
		}
		return rs
	}
	curves := &FleetResult{Runs: idle(FleetRun{Clusters: 100}, FleetRun{Clusters: 500}, FleetRun{Clusters: 1000}, FleetRun{Clusters: 2000})}
	part := &FleetResult{Runs: idle(FleetRun{Clusters: 100}, FleetRun{Clusters: 500})}
	part.keepFrom(curves, at)
	if c := part.complete(); len(part.Runs) != 6 || len(c) != 4 || c[0].Measured == nil || part.at(100).Measured != nil {
		t.Errorf("a run of 2 sizes beside curves of 4: %d rows, curves of %d", len(part.Runs), len(c))
	}
	full := &FleetResult{Runs: idle(FleetRun{Clusters: 100}, FleetRun{Clusters: 500}, FleetRun{Clusters: 1000}, FleetRun{Clusters: 2000})}
	full.keepFrom(part, at)
	if len(full.Runs) != 4 || full.complete()[0].Measured != nil {
		t.Errorf("a run of 4 sizes kept %d rows", len(full.Runs))
	}
	mine := &FleetShard{Clusters: 300}
	f2 := &FleetResult{Shard: mine, Calibration: []FleetRun{{Clusters: 5}}}
	f2.keepFrom(old, at)
	if f2.Shard != mine || len(f2.Calibration) != 1 || f2.Calibration[0].Measured != nil {
		t.Errorf("this run's shard or calibration replaced: %+v %+v", f2.Shard, f2.Calibration)
	}
}

// TestFleetCurvesOneMeasurement: the curves and the targets read from them
// use the runs of one measurement, the one with the most sizes, never a
// mix of this run's sizes and an earlier run's.
func TestFleetCurvesOneMeasurement(t *testing.T) {
	old := &PhaseRun{Commit: "0c2ba38"}
	run := func(n int, m *PhaseRun) FleetRun {
		return FleetRun{Clusters: n, Idle: ProcSample{RSS: int64(n) << 20}, Measured: m}
	}
	f := &FleetResult{Runs: []FleetRun{run(100, nil), run(100, old), run(500, nil), run(500, old), run(1000, old), run(2000, old)}}
	c := f.complete()
	if len(c) != 4 || c[0].Measured != old || c[3].Clusters != 2000 {
		t.Errorf("curves of %d runs from %v, want the earlier run's 4", len(c), c[0].Measured)
	}
	if note := f.curvesNote(); !strings.Contains(note, "0c2ba38") {
		t.Errorf("curves note %q", note)
	}
	f.Runs = f.Runs[:4]
	if c := f.complete(); len(c) != 2 || c[0].Measured != nil || f.curvesNote() != "" {
		t.Errorf("a tie must prefer this run: %+v", c)
	}
}
