package shard

import "github.com/prometheus/client_golang/prometheus"

// Metrics are a member's regatta_shard_* metrics.
type Metrics struct {
	Owned      prometheus.Gauge
	Members    prometheus.Gauge
	Active     prometheus.Gauge
	Rebalances prometheus.Counter
	// Takeover observes, when a member expires, the time since its last
	// renewal this member saw: how long its share went unowned.
	Takeover prometheus.Histogram
}

// NewMetrics registers the shard metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Owned:      prometheus.NewGauge(prometheus.GaugeOpts{Name: "regatta_shard_clusters_owned", Help: "Clusters this replica owns and may reconcile."}),
		Members:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "regatta_shard_members", Help: "Live replicas as this replica sees them, itself included."}),
		Active:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "regatta_shard_active", Help: "1 while this replica's membership Lease is fresh and it may work."}),
		Rebalances: prometheus.NewCounter(prometheus.CounterOpts{Name: "regatta_shard_rebalances_total", Help: "Times the live replicas changed (a replica joined, left or expired)."}),
		Takeover: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "regatta_shard_takeover_seconds",
			Help:    "Time from the last renewal seen of a replica that expired to the takeover of its clusters.",
			Buckets: []float64{1, 2, 5, 10, 15, 20, 30, 60},
		}),
	}
	reg.MustRegister(m.Owned, m.Members, m.Active, m.Rebalances, m.Takeover)
	return m
}
