package reconciler

import (
	"log/slog"
	"sort"
	"sync"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// clusterPass is the work of one pass on one cluster.
type clusterPass struct {
	r     *Reconciler
	rev   *revision
	spec  *spec.Cluster
	cl    *apply.Cluster
	facts *factsClient
	st    status.ClusterStatus
	log   *slog.Logger
	// results by profile, filled wave by wave; mu guards it while the
	// profiles of one wave run concurrently.
	mu      sync.Mutex
	results map[string]status.Profile
	// inventories are those listed at the start of the pass, by profile;
	// nil when the listing failed (each apply then reads its own).
	inventories map[string]*apply.Inventory
	// stop reports that a newer revision is in force: nothing more of this
	// one is applied.
	stop       func() bool
	superseded bool
	// retry is set when the cluster should be tried again after a backoff:
	// it was unreachable, or an apply or health check failed.
	retry bool
}

// stopped reports, and remembers, that a newer revision is in force.
// Profiles of a wave ask it concurrently.
func (p *clusterPass) stopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.superseded && p.stop != nil && p.stop() {
		p.superseded = true
		p.log.Info("a newer revision is in force; re-planning", "revision", status.ShortRevision(p.rev.sha))
	}
	return p.superseded
}

func (p *clusterPass) setResult(s status.Profile) {
	if prof := p.rev.repo.Profile(s.Name); prof != nil && prof.Tenant() != nil {
		s.Tenant = prof.Tenant().Name()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.results[s.Name] = s
}

func (p *clusterPass) result(name string) (status.Profile, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.results[name]
	return s, ok
}

func (p *clusterPass) renderFacts() render.ClusterFacts {
	return render.FactsOf(p.spec, p.st.Labels, p.st.KubernetesVersion)
}

func (p *clusterPass) sortedResults() []status.Profile {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]status.Profile, 0, len(p.results))
	for _, s := range p.results {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (p *clusterPass) inventoryOf(profile string) (*apply.Inventory, bool) {
	if p.inventories == nil {
		return nil, false
	}
	return p.inventories[profile], true
}
