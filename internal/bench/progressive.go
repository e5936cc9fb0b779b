package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// ProgressiveOptions configures the progressive phase (issue 14).
type ProgressiveOptions struct {
	Rounds int
	Bins   *Binaries
	// Soak is the canary's and staging's soak time.
	Soak time.Duration
	// Dir receives logs and kubeconfigs (internal/bench/raw/progressive).
	Dir  string
	Logf func(string, ...any)
}

// ProgressiveResult is one round of the progressive phase: a change rolled
// out by a running daemon over 9 fresh API servers in 3 stages (canary 1,
// staging 2, production 6 with maxUpdate 2).
type ProgressiveResult struct {
	Round int `json:"round"`
	// Secs is from the trigger (the commit pushed) to the last cluster
	// applied and healthy, minus the soak times; TotalSecs with them.
	Secs      float64 `json:"seconds"`
	TotalSecs float64 `json:"totalSeconds"`
	SoakSecs  float64 `json:"soakSeconds"`
	// FirstSecs is the first rollout of a fresh daemon through the same
	// stages (the profile new on every cluster), from its start, with the
	// soaks.
	FirstSecs float64            `json:"firstRolloutSeconds"`
	Stages    []ProgressiveStage `json:"stages"`
	// MaxUpdating is the most clusters updating at once (admitted, not yet
	// applied and healthy), sampled every 5 ms from the daemon's
	// regatta_rollout_admitted_total and regatta_rollout_clusters{Done}.
	MaxUpdating int `json:"maxUpdating"`
	// MaxUpdate is the production stage's cap.
	MaxUpdate int    `json:"maxUpdate"`
	Err       string `json:"error,omitempty"`
}

// ProgressiveStage is one stage of a timed rollout.
type ProgressiveStage struct {
	Name      string `json:"name"`
	Clusters  int    `json:"clusters"`
	MaxUpdate int    `json:"maxUpdate,omitempty"`
	// FirstSecs and LastSecs are from the trigger to the first and the
	// last of the stage's clusters holding the change (polled every 20 ms).
	FirstSecs float64 `json:"firstSeconds"`
	LastSecs  float64 `json:"lastSeconds"`
	// Secs is from when the stage could begin (the trigger, or the stage
	// before's last cluster plus its soak) to its last cluster.
	Secs float64 `json:"seconds"`
}

// progressiveStages are the stages of the phase, in order, with the
// clusters of each (by index in the fleet) and their caps.
var progressiveStages = []struct {
	name      string
	from, to  int
	maxUpdate int
	soak      bool
}{
	{name: "canary", from: 0, to: 1, soak: true},
	{name: "staging", from: 1, to: 3, soak: true},
	{name: "production", from: 3, to: 9, maxUpdate: 2},
}

const progressiveProfile = "progressive"

// RunProgressive runs the rounds of the progressive phase, each on fresh
// clusters.
func RunProgressive(ctx context.Context, o ProgressiveOptions, out func(ProgressiveResult)) error {
	if o.Soak <= 0 {
		o.Soak = time.Second
	}
	for n := range o.Rounds {
		res, err := progressiveRound(ctx, o, n)
		res.Round = n
		if err != nil {
			res.Err = err.Error()
		}
		o.Logf("progressive round %d: %.2fs minus soaks (%.2fs in all, soaks %.0fs), first rollout %.2fs, at most %d updating; %s",
			n, res.Secs, res.TotalSecs, res.SoakSecs, res.FirstSecs, res.MaxUpdating, res.Err)
		out(res)
		if err != nil {
			return fmt.Errorf("round %d: %w", n, err)
		}
	}
	return nil
}

func progressiveRound(ctx context.Context, o ProgressiveOptions, n int) (ProgressiveResult, error) {
	res := ProgressiveResult{MaxUpdate: 2}
	dir := filepath.Join(o.Dir, fmt.Sprintf("round-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	cs, err := StartClusters(ctx, o.Bins, progressiveStages[len(progressiveStages)-1].to, filepath.Join(dir, "kubeconfigs"))
	if err != nil {
		return res, err
	}
	defer cs.Stop()
	g, err := StartGitRepo(ctx, dir)
	if err != nil {
		return res, err
	}
	defer g.Close()
	if _, err := g.Commit(ctx, "fleet in three stages", progressiveFiles(cs.Fleet, o.Soak, 1)); err != nil {
		return res, err
	}
	logf, err := os.Create(filepath.Join(dir, "regatta.log"))
	if err != nil {
		return res, err
	}
	defer logf.Close()
	start := time.Now()
	d, err := StartDaemon(ctx, DaemonOptions{RepoURL: g.URL(), HelmCacheDir: filepath.Join(dir, "helm"), Log: logf,
		StatusInterval: time.Second, Regatta: o.Bins.Regatta})
	if err != nil {
		return res, err
	}
	defer d.Stop()
	defer d.drain(ctx)()
	w := &rolloutWatch{d: d, clusters: len(cs.Fleet)}
	if _, err := w.wait(ctx, cs, 1, start); err != nil {
		return res, fmt.Errorf("first rollout: %w", err)
	}
	res.FirstSecs = time.Since(start).Seconds()
	return timeChange(ctx, o, cs, g, w, res)
}

// timeChange commits generation 2 of the profile's ConfigMap, triggers the
// daemon and times the rollout.
func timeChange(ctx context.Context, o ProgressiveOptions, cs *Clusters, g *GitRepo, w *rolloutWatch, res ProgressiveResult) (ProgressiveResult, error) {
	if _, err := g.Commit(ctx, "generation 2", progressiveConfigMap(2)); err != nil {
		return res, err
	}
	w.reset()
	start := time.Now()
	w.d.Trigger()
	applied, err := w.wait(ctx, cs, 2, start)
	if err != nil {
		return res, err
	}
	res.TotalSecs = time.Since(start).Seconds()
	res.MaxUpdating = w.most
	for _, st := range progressiveStages {
		if st.soak {
			res.SoakSecs += o.Soak.Seconds()
		}
	}
	res.Secs = res.TotalSecs - res.SoakSecs
	res.Stages = stageTimes(cs.Fleet, applied, o.Soak)
	return res, nil
}

// stageTimes derives each stage's times from when each cluster held the
// change.
func stageTimes(fleet []FleetCluster, applied map[string]float64, soak time.Duration) []ProgressiveStage {
	var out []ProgressiveStage
	begin := 0.0
	for _, st := range progressiveStages {
		s := ProgressiveStage{Name: st.name, Clusters: st.to - st.from, MaxUpdate: st.maxUpdate, FirstSecs: -1}
		for _, c := range fleet[st.from:st.to] {
			t := applied[c.Name]
			if s.FirstSecs < 0 || t < s.FirstSecs {
				s.FirstSecs = t
			}
			s.LastSecs = max(s.LastSecs, t)
		}
		s.Secs = s.LastSecs - begin
		begin = s.LastSecs
		if st.soak {
			begin += soak.Seconds()
		}
		out = append(out, s)
	}
	return out
}

// rolloutWatch follows the daemon's rollout metrics of the profile.
type rolloutWatch struct {
	d        *Daemon
	clusters int
	admitted float64 // regatta_rollout_admitted_total at reset
	most     int
}

func (w *rolloutWatch) metric() (admitted, done float64) {
	m := w.d.d.Metrics().Rollout
	return testutil.ToFloat64(m.Admitted.WithLabelValues(progressiveProfile)),
		testutil.ToFloat64(m.Clusters.WithLabelValues(progressiveProfile, "Done"))
}

func (w *rolloutWatch) reset() {
	w.admitted, _ = w.metric()
	w.most = 0
}

// wait polls the clusters for generation gen and the daemon's metrics
// until every cluster holds it and the rollout counts every cluster
// admitted and Done; it returns when each cluster held it, in seconds
// from start.
func (w *rolloutWatch) wait(ctx context.Context, cs *Clusters, gen int, start time.Time) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	applied := make(chan map[string]float64, 1)
	errc := make(chan error, 1)
	go func() {
		r := &rolloutRound{cs: cs}
		t, err := r.probeNamed(ctx, cs.Fleet, probePoll{name: progressiveProfile, key: "generation", value: fmt.Sprint(gen), every: 20 * time.Millisecond}, start)
		applied <- t
		errc <- err
	}()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("generation %d not rolled out within 3m", gen)
		case <-tick.C:
		}
		admitted, done := w.metric()
		w.most = max(w.most, int(admitted-w.admitted-done))
		if int(admitted-w.admitted) >= w.clusters && int(done) == w.clusters {
			break
		}
	}
	if err := <-errc; err != nil {
		return nil, err
	}
	return <-applied, nil
}

func progressiveFiles(fleet []FleetCluster, soak time.Duration, gen int) map[string]string {
	files := progressiveConfigMap(gen)
	for _, st := range progressiveStages {
		for _, c := range fleet[st.from:st.to] {
			files["clusters/"+c.Name+"/cluster.yaml"] = fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\n  labels: {env: prod, stage: %s}\nspec: {}\n", c.Name, st.name)
			files["clusters/"+c.Name+"/kubeconfig.yaml"] = kubeconfigSecret(c.Name, c.Kubeconfig)
		}
	}
	files["profiles/"+progressiveProfile+".yaml"] = fmt.Sprintf(`apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: %s}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: cm
    manifests: {path: %s}
  rollout:
    stages:
    - {name: canary, clusterSelector: {matchLabels: {stage: canary}}, soak: %s}
    - {name: staging, clusterSelector: {matchLabels: {stage: staging}}, soak: %s}
    - {name: production, clusterSelector: {matchLabels: {stage: production}}, maxUpdate: 2}
`, progressiveProfile, progressiveProfile, soak, soak)
	return files
}

func progressiveConfigMap(gen int) map[string]string {
	return map[string]string{progressiveProfile + "/cm.yaml": fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {generation: \"%d\"}\n", progressiveProfile, gen)}
}
