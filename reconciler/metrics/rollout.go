package metrics

import "github.com/prometheus/client_golang/prometheus"

// Rollout holds the regatta_rollout_* metrics of progressive rollouts.
type Rollout struct {
	// Clusters counts each rolling profile's clusters by rollout state
	// (Pending, Updating, Done, Failed).
	Clusters *prometheus.GaugeVec // profile, state
	// Halted is 1 while a profile's rollout is halted by failures.
	Halted *prometheus.GaugeVec // profile
	// Admitted counts the clusters a rollout let take its revision.
	Admitted *prometheus.CounterVec // profile
	// Started counts the rollouts begun (a commit changed the profile).
	Started *prometheus.CounterVec // profile
}

func newRollout(f factory) *Rollout {
	return &Rollout{
		Clusters: f.gaugeVec("regatta_rollout_clusters", "Clusters of each rolling profile by rollout state: Pending, Updating, Done, Failed.", "profile", "state"),
		Halted:   f.gaugeVec("regatta_rollout_halted", "1 while the profile's rollout is halted by failed clusters.", "profile"),
		Admitted: f.counterVec("regatta_rollout_admitted_total", "Clusters a rollout admitted to take its revision.", "profile"),
		Started:  f.counterVec("regatta_rollout_started_total", "Rollouts begun: a commit changed the profile.", "profile"),
	}
}

// SetRolloutCounts sets a profile's cluster counts by state.
func (r *Rollout) SetRolloutCounts(profile string, counts map[string]int, halted bool) {
	for _, s := range []string{"Pending", "Updating", "Done", "Failed"} {
		r.Clusters.WithLabelValues(profile, s).Set(float64(counts[s]))
	}
	v := 0.0
	if halted {
		v = 1
	}
	r.Halted.WithLabelValues(profile).Set(v)
}
