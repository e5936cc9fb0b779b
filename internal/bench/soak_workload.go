package bench

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Kinds of the soak's commits, in the order they rotate.
const (
	SoakProfileChange = "profile change"
	SoakClusterRemove = "cluster removed"
	SoakTenantChange  = "tenant change"
	SoakClusterAdd    = "cluster added"
)

var soakRotation = []string{SoakProfileChange, SoakClusterRemove, SoakTenantChange, SoakClusterAdd}

// soakTenant is the tenant the soak's tenant changes edit.
const soakTenant = "bench"

// soakRepo is the soak's fleet repository: the fleet phase's, plus a
// tenant, with the last cluster (the spare) leaving and coming back.
type soakRepo struct {
	names   []string
	objects int
	// gen is profile fa's generation, tenant the tenant's, spareOut
	// whether the spare is out of the fleet.
	gen, tenant int
	spareOut    bool
	// returns counts the spare's returns to the fleet.
	returns int
	commits int
}

func newSoakRepo(names []string, objects int) *soakRepo {
	return &soakRepo{names: names, objects: objects}
}

func (r *soakRepo) spare() string { return r.names[len(r.names)-1] }

// clusters are the fleet's clusters now.
func (r *soakRepo) clusters() []string {
	if r.spareOut {
		return r.names[:len(r.names)-1]
	}
	return r.names
}

func (r *soakRepo) fleet() ScaleFleet { return ScaleFleet{Clusters: r.names, Objects: r.objects} }

// on counts the fleet's clusters on server i of servers.
func (r *soakRepo) on(i, servers int) int {
	n := 0
	for j := range r.names {
		if ServerOf(j, servers) == i {
			n++
		}
	}
	return n
}

// next moves the repository one step of the rotation and returns the
// step's kind.
func (r *soakRepo) next() string {
	kind := soakRotation[r.commits%len(soakRotation)]
	r.commits++
	switch kind {
	case SoakProfileChange:
		r.gen++
	case SoakClusterRemove:
		r.spareOut = true
	case SoakClusterAdd:
		r.spareOut = false
		r.returns++
	case SoakTenantChange:
		r.tenant++
	}
	return kind
}

// files is the whole repository at the current step.
func (r *soakRepo) files() map[string]string {
	files := r.fleet().Files(r.gen, true)
	maps.Copy(files, soakEventFiles())
	if r.spareOut {
		files["clusters/"+r.spare()+"/cluster.yaml"] = ""
	}
	files["tenants/"+soakTenant+"/tenant.yaml"] = fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Tenant\n"+
		"metadata: {name: %s}\nspec:\n  owners: [\"@bench/team-%d\"]\n  clusters: {selector: {matchLabels: {bench: fleet}}}\n"+
		"  namespaces: [\"s-*\"]\n  kinds: [{kind: ConfigMap}]\n  serviceAccount: {create: false}\n", soakTenant, r.tenant)
	return files
}

// SoakCommit is one commit of the soak: its kind, when it was pushed (from
// the soak's start), and how long until the status branch carried it on
// every cluster with each profile Applied (Behind: clusters that had not
// within the bound).
type SoakCommit struct {
	At       float64 `json:"atSeconds"`
	Kind     string  `json:"kind"`
	Revision string  `json:"revision"`
	Secs     float64 `json:"seconds"`
	Behind   int     `json:"behind,omitempty"`
}

// convergeBound is how long a commit may take to reach the status branch
// on every cluster: two outages (a commit pushed as one starts) and two
// minutes.
func (s *soakRun) convergeBound() time.Duration { return 2*s.o.Outage + 2*time.Minute }

// commits pushes a commit every o.CommitEvery, rotating its kind, and
// waits for each to converge before the next (a late one delays the
// next rather than overlapping it).
func (s *soakRun) commits(ctx context.Context) error {
	for k := 1; ctx.Err() == nil; k++ {
		if err := sleepCtx(ctx, time.Until(s.res.start.Add(time.Duration(k)*s.o.CommitEvery))); err != nil {
			return nil
		}
		kind := s.repo.next()
		rev, at, err := s.fr.push(ctx, kind, s.repo.files())
		if err != nil {
			return fmt.Errorf("commit %d (%s): %w", k, kind, err)
		}
		c := SoakCommit{At: at.Sub(s.res.start).Seconds(), Kind: kind, Revision: rev}
		clusters := s.repo.clusters()
		behind, err := s.st.waitRevision(ctx, s.fr.git.WorkDir(), clusters, rev, s.convergeBound())
		c.Secs, c.Behind = time.Since(at).Seconds(), behind
		if ctx.Err() != nil {
			return nil // the run ended during the wait: not counted
		}
		if kind == SoakClusterRemove {
			s.st.forget(s.repo.spare())
		}
		s.res.mu.Lock()
		s.res.Commits = append(s.res.Commits, c)
		s.res.mu.Unlock()
		s.o.Logf("soak: commit %d (%s) on the status branch of %d clusters in %.1fs (%d behind)", k, kind, len(clusters), c.Secs, behind)
		if err != nil {
			s.o.Logf("soak: commit %d: %v", k, err)
		}
	}
	return nil
}

// SoakDrift is the drift the soak injected: changes made to an object
// regatta manages on a random cluster, those restored by regatta (and
// how fast), and those skipped (the cluster's server was down).
type SoakDrift struct {
	Injected    int     `json:"injected"`
	Restored    int     `json:"restored"`
	Skipped     int     `json:"skipped"`
	RestoreP50  float64 `json:"restoreP50Seconds"`
	RestoreMax  float64 `json:"restoreMaxSeconds"`
	Corrections float64 `json:"driftCorrections"`
	restoreSecs []float64
}

// soakDriftObject is the object of profile fa (drift detected) the soak
// changes: its first ConfigMap after the marker.
const soakDriftObject = FleetDriftProfile + "-config-01"

// drift changes soakDriftObject on a random cluster every o.DriftEvery and
// times regatta restoring it.
func (s *soakRun) drift(ctx context.Context) {
	p := s.newPicker(1)
	s.every(ctx, s.o.DriftEvery, func(k int) { s.driftOne(ctx, p, k) })
}

// every calls fn(k) at k periods from the soak's start, k = 1, 2, ...,
// until ctx ends.
func (s *soakRun) every(ctx context.Context, period time.Duration, fn func(k int)) {
	for k := 1; ctx.Err() == nil; k++ {
		if sleepCtx(ctx, time.Until(s.res.start.Add(time.Duration(k)*period))) != nil {
			return
		}
		fn(k)
	}
}

// picker draws random clusters of the fleet (the spare aside: it leaves
// the fleet) with an admin client of each API server.
type picker struct {
	rng     *rand.Rand
	clients []kubernetes.Interface
	le      *logicalEnv
}

// newPicker is a picker with a seed of its own.
func (s *soakRun) newPicker(seed uint64) *picker {
	p := &picker{rng: rand.New(rand.NewPCG(54, seed)), le: s.fr.le}
	for _, srv := range s.fr.le.Servers {
		cs, _ := kubernetes.NewForConfig(srv.RESTConfig())
		p.clients = append(p.clients, cs)
	}
	return p
}

// pick draws a cluster: its name, the ConfigMaps of its namespace, and
// whether its API server runs.
func (p *picker) pick() (string, typedcorev1.ConfigMapInterface, bool) {
	i := p.rng.IntN(len(p.le.Names) - 1)
	srv := ServerOf(i, len(p.clients))
	name := p.le.Names[i]
	return name, p.clients[srv].CoreV1().ConfigMaps(LogicalNamespace(name)), p.le.Servers[srv].Running()
}

// driftOne changes the object on one random cluster of the fleet and
// waits up to 30 s for its restore.
func (s *soakRun) driftOne(ctx context.Context, p *picker, k int) {
	_, cms, up := p.pick()
	patch := fmt.Appendf(nil, `{"data":{"key":"drift %d"}}`, k)
	if !up {
		s.countDrift(func(d *SoakDrift) { d.Skipped++ })
		return
	}
	if _, err := cms.Patch(ctx, soakDriftObject, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		s.countDrift(func(d *SoakDrift) { d.Skipped++ })
		return
	}
	begin := time.Now()
	s.countDrift(func(d *SoakDrift) { d.Injected++ })
	for time.Since(begin) < 30*time.Second && ctx.Err() == nil {
		cm, err := cms.Get(ctx, soakDriftObject, metav1.GetOptions{})
		if err == nil && cm.Data["key"] != fmt.Sprintf("drift %d", k) {
			secs := time.Since(begin).Seconds()
			s.countDrift(func(d *SoakDrift) { d.Restored++; d.restoreSecs = append(d.restoreSecs, secs) })
			return
		}
		_ = sleepCtx(ctx, 100*time.Millisecond)
	}
}

func (s *soakRun) countDrift(fn func(*SoakDrift)) {
	s.res.mu.Lock()
	defer s.res.mu.Unlock()
	fn(&s.res.Drift)
}

// summarize fills the restore times' p50 and maximum.
func (d *SoakDrift) summarize() {
	if len(d.restoreSecs) == 0 {
		return
	}
	xs := slices.Clone(d.restoreSecs)
	d.RestoreP50, d.RestoreMax = Quantile(xs, .5), Quantile(xs, 1)
}
