package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// pairStates exports regatta_pair_state: for each (cluster, profile) pair,
// one series per state, 1 for the pair's current state and 0 for the
// others (kube-state-metrics' convention, so `== 0` and `== 1` both read).
//
// It keeps one small entry per pair and builds the series when scraped. A
// gauge per pair and state held every state's label set for every pair:
// about 12 KiB of heap per cluster of two profiles, for values that are
// all implied by one string.
type pairStates struct {
	desc *prometheus.Desc

	mu    sync.Mutex
	pairs map[pairKey]pairState
	// states holds each state's label, shared by every pair's series.
	states map[string]*dto.LabelPair
}

type pairKey struct{ cluster, profile string }

type pairState struct {
	state string
	// all is the caller's list of states, shared between pairs.
	all []string
}

func newPairStates(name, help string) *pairStates {
	return &pairStates{
		desc:   prometheus.NewDesc(name, help, []string{"cluster", "profile", "state"}, nil),
		pairs:  map[pairKey]pairState{},
		states: map[string]*dto.LabelPair{},
	}
}

func (p *pairStates) set(cluster, profile, state string, all []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pairs[pairKey{cluster, profile}] = pairState{state: state, all: all}
}

func (p *pairStates) forget(cluster, profile string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pairs, pairKey{cluster, profile})
}

// Describe implements prometheus.Collector.
func (p *pairStates) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

// Collect implements prometheus.Collector. The pairs are copied first so
// that a slow scrape never holds up the reconciler. A pair's series share
// its cluster and profile labels, and every series of a state its state
// label (read-only, as client_golang's own metrics share theirs), so a
// scrape allocates little more than the series themselves.
func (p *pairStates) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	keys := make([]pairKey, 0, len(p.pairs))
	vals := make([]pairState, 0, len(p.pairs))
	for k, v := range p.pairs {
		keys = append(keys, k)
		vals = append(vals, v)
	}
	p.mu.Unlock()
	for i, k := range keys {
		cluster, profile := labelPair("cluster", k.cluster), labelPair("profile", k.profile)
		for _, s := range vals[i].all {
			v := 0.0
			if s == vals[i].state {
				v = 1
			}
			ch <- &pairSeries{desc: p.desc, labels: [3]*dto.LabelPair{cluster, profile, p.stateLabel(s)}, value: v}
		}
	}
}

func (p *pairStates) stateLabel(state string) *dto.LabelPair {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.states[state]
	if !ok {
		l = labelPair("state", state)
		p.states[state] = l
	}
	return l
}

func labelPair(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

// pairSeries is one series of regatta_pair_state; its labels are sorted
// by name, as prometheus.Metric requires.
type pairSeries struct {
	desc   *prometheus.Desc
	labels [3]*dto.LabelPair
	value  float64
}

func (s *pairSeries) Desc() *prometheus.Desc { return s.desc }

func (s *pairSeries) Write(out *dto.Metric) error {
	out.Label = s.labels[:]
	out.Gauge = &dto.Gauge{Value: &s.value}
	return nil
}
