// Package metrics defines regatta's Prometheus metrics on a registry of its
// own (no global state) and serves them with /healthz and /readyz.
package metrics

import (
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds every regatta_ metric.
type Metrics struct {
	Registry *prometheus.Registry

	PassDuration prometheus.Histogram
	Passes       *prometheus.CounterVec // result: converged, unconverged, invalid
	// ClusterDuration and Clusters measure each cluster's reconciliation.
	ClusterDuration  prometheus.Histogram
	Clusters         *prometheus.CounterVec // result: converged, progressing, failed
	Applies          *prometheus.CounterVec // cluster, profile
	Prunes           *prometheus.CounterVec // cluster, profile
	DriftCorrections *prometheus.CounterVec // cluster, profile
	RenderCache      *prometheus.CounterVec // result: hit, miss
	ClusterReachable *prometheus.GaugeVec   // cluster
	SourceRevision   *prometheus.GaugeVec   // revision: 1 for the current one
	GitFetchErrors   prometheus.Counter
	StatusCommits    prometheus.Counter
	Rollout          *Rollout
	// Notifications counts messages by destination type and result: sent,
	// failed (an attempt; it is retried) or dropped.
	Notifications *prometheus.CounterVec
	// NotificationChecks counts the subjects due a message by outcome: new
	// (recorded and sent) or known (the ledger had it: sent before a
	// restart, or by another replica, and nothing new since).
	NotificationChecks *prometheus.CounterVec

	pairStates *pairStates

	ready atomic.Bool
}

// New registers every metric on a new registry.
func New() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	f := factory{m.Registry}
	m.PassDuration = f.histogram("regatta_pass_duration_seconds", "Time from the first work queued to the fleet settling.")
	m.Passes = f.counterVec("regatta_passes_total", "Times the fleet settled (nothing queued, nothing waiting for health), by result: converged, unconverged or invalid.", "result")
	m.ClusterDuration = f.histogram("regatta_cluster_reconcile_duration_seconds", "Duration of one cluster's reconciliation (health is awaited off it).")
	m.Clusters = f.counterVec("regatta_cluster_reconciles_total", "Cluster reconciliations by result: converged, progressing or failed.", "result")
	m.pairStates = newPairStates("regatta_pair_state", "1 for the current state of each (cluster, profile) pair.")
	m.Registry.MustRegister(m.pairStates)
	m.Applies = f.counterVec("regatta_applies_total", "Applies of a (cluster, profile) pair that wrote to the cluster.", "cluster", "profile")
	m.Prunes = f.counterVec("regatta_prunes_total", "Objects deleted because they left a profile.", "cluster", "profile")
	m.DriftCorrections = f.counterVec("regatta_drift_corrections_total", "Objects restored after drift.", "cluster", "profile")
	m.RenderCache = f.counterVec("regatta_render_cache_total", "Render cache lookups by result: hit or miss.", "result")
	m.ClusterReachable = f.gaugeVec("regatta_cluster_reachable", "1 when the cluster answered in the last pass.", "cluster")
	m.SourceRevision = f.gaugeVec("regatta_source_revision", "1 for the fleet repository revision in force.", "revision")
	m.GitFetchErrors = f.counter("regatta_git_fetch_errors_total", "Failed fetches of the fleet repository.")
	m.StatusCommits = f.counter("regatta_status_commits_total", "Status commits pushed to the repository.")
	m.Rollout = newRollout(f)
	m.Notifications = f.counterVec("regatta_notifications_total", "Notification messages by destination type and result: sent, failed (an attempt, retried) or dropped.", "type", "result")
	m.NotificationChecks = f.counterVec("regatta_notification_checks_total", "Subjects due a message, by outcome: new (sent) or known (the ledger had it).", "outcome")
	m.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// SetPairState marks state as the pair's current state.
// all lists every state, each exported with 0 but the current one; it is
// kept, not copied, so the same slice should be passed every time.
func (m *Metrics) SetPairState(cluster, profile, state string, all []string) {
	m.pairStates.set(cluster, profile, state, all)
}

// ForgetPair drops a pair's series once it no longer exists.
func (m *Metrics) ForgetPair(cluster, profile string) {
	m.pairStates.forget(cluster, profile)
}

// SetRevision marks rev as the revision in force.
func (m *Metrics) SetRevision(rev string) {
	m.SourceRevision.Reset()
	m.SourceRevision.WithLabelValues(rev).Set(1)
}

// SetReady flips /readyz: ready once the first pass finished.
func (m *Metrics) SetReady(ready bool) { m.ready.Store(ready) }

// Handler serves /metrics, /healthz and /readyz.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !m.ready.Load() {
			http.Error(w, "first pass not finished", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	return mux
}

type factory struct{ r prometheus.Registerer }

func (f factory) histogram(name, help string) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help,
		Buckets: []float64{.1, .25, .5, 1, 2, 5, 10, 30, 60, 120, 300}})
	f.r.MustRegister(h)
	return h
}

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.r.MustRegister(c)
	return c
}

func (f factory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.r.MustRegister(c)
	return c
}

func (f factory) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	f.r.MustRegister(g)
	return g
}
