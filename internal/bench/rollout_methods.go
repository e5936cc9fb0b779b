package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// regatta times the first rollout of a fresh daemon (from its start, when
// it fetches the commit, to the pass that converged every pair) and then
// commits that change one overlay.
func (r *rolloutRound) regatta(ctx context.Context) ([]Sample, error) {
	f := r.fleet("rg")
	dir := filepath.Join(r.dir, "regatta")
	g, err := StartGitRepo(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	rev, err := g.Commit(ctx, "fleet", f.Files())
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "regatta.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	before := r.requests(ctx)
	stop := r.profile()
	cpu := ReadCPUUse()
	waitProfiles := r.apiProfiles(ctx, MethodRegatta)
	start := time.Now()
	d, err := StartDaemon(ctx, DaemonOptions{RepoURL: g.URL(), HelmCacheDir: filepath.Join(dir, "helm"), Log: logf, Regatta: r.o.Bins.Regatta})
	if err != nil {
		return nil, err
	}
	defer d.Stop()
	p, err := d.WaitRevision(ctx, rev, 10*time.Minute)
	used := ReadCPUUse().Sub(cpu)
	stop()
	waitProfiles()
	if err != nil {
		return nil, err
	}
	r.heapProfile()
	samples := []Sample{{Method: MethodRegatta, Secs: p.At.Sub(start).Seconds(), PassSecs: p.Result.Duration.Seconds(),
		Requests: r.perCluster(before, r.requests(ctx)), CPU: used}}
	if err := r.verify(ctx, f); err != nil {
		return samples, err
	}
	for k := range r.o.Changes {
		s, err := r.change(ctx, g, d, f, r.n*r.o.Changes+k)
		if err != nil {
			return samples, err
		}
		samples = append(samples, s)
		rev = s.Revision
	}
	d.Stop()
	s, d2, err := r.restart(ctx, g, rev)
	if d2 != nil {
		defer d2.Stop()
	}
	if err != nil {
		return samples, fmt.Errorf("restart: %w", err)
	}
	samples = append(samples, s)
	stuck, err := r.stuck(ctx, g, d2, f)
	if err != nil {
		return samples, fmt.Errorf("one cluster stuck: %w", err)
	}
	samples = append(samples, stuck...)
	ev, err := r.events(ctx, g, d2, f)
	if err != nil {
		return append(samples, ev...), fmt.Errorf("event-driven add-ons: %w", err)
	}
	return append(samples, ev...), nil
}

// profile starts a CPU profile of regatta's first rollout in round 0.
func (r *rolloutRound) profile() func() {
	if r.o.CPUProfile == "" || r.n != 0 {
		return func() {}
	}
	f, err := os.Create(r.o.CPUProfile)
	if err != nil {
		r.o.Logf("cpu profile: %v", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}
	}
	// Block and mutex profiles show what the rollout waits on (locks,
	// channels) rather than what burns CPU.
	runtime.SetBlockProfileRate(int(time.Millisecond))
	runtime.SetMutexProfileFraction(10)
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		r.waitProfiles()
	}
}

// waitProfiles writes the block and mutex profiles of the rollout beside
// the CPU profile and turns their sampling off again.
func (r *rolloutRound) waitProfiles() {
	base := strings.TrimSuffix(r.o.CPUProfile, ".cpu.pprof")
	for _, name := range []string{"block", "mutex"} {
		if f, err := os.Create(base + "." + name + ".pprof"); err == nil {
			_ = pprof.Lookup(name).WriteTo(f, 0)
			f.Close()
		}
	}
	runtime.SetBlockProfileRate(0)
	runtime.SetMutexProfileFraction(0)
}

// heapProfile writes the heap in use after regatta's first rollout in
// round 0 (beside the CPU profile), for what a managed cluster costs.
func (r *rolloutRound) heapProfile() {
	if r.o.CPUProfile == "" || r.n != 0 {
		return
	}
	f, err := os.Create(strings.TrimSuffix(r.o.CPUProfile, ".cpu.pprof") + ".heap.pprof")
	if err != nil {
		return
	}
	defer f.Close()
	runtime.GC()
	_ = pprof.Lookup("heap").WriteTo(f, 0)
}

// kustomizeProfiles are the indexes of the Kustomize profiles.
func kustomizeProfiles(n int) []int {
	var out []int
	for i := range n {
		if ProfileKind(i) == KindKustomize {
			out = append(out, i)
		}
	}
	return out
}

// change commits a new generation of one overlay of one Kustomize profile
// and times it from the commit being seen (a webhook trigger) to the pass
// that converged.
func (r *rolloutRound) change(ctx context.Context, g *GitRepo, d *Daemon, f Fleet, k int) (Sample, error) {
	ks := kustomizeProfiles(f.Profiles)
	profile, variant := ProfileName(ks[k%len(ks)]), Variants[k%len(Variants)]
	rev, err := g.Commit(ctx, "change one overlay", map[string]string{
		OverlayFile(profile, variant): f.OverlayKustomization(profile, variant, k+1)})
	if err != nil {
		return Sample{}, err
	}
	before := r.requests(ctx)
	start := time.Now()
	d.Trigger()
	p, err := d.WaitRevision(ctx, rev, 5*time.Minute)
	if err != nil {
		return Sample{}, err
	}
	s := Sample{Method: MethodChange, Secs: p.At.Sub(start).Seconds(), PassSecs: p.Result.Duration.Seconds(),
		Requests: r.perCluster(before, r.requests(ctx)), Revision: rev}
	return s, r.checkGeneration(ctx, f, profile, variant, k+1)
}

// checkGeneration checks that the clusters of a variant hold the new
// generation of the settings ConfigMap.
func (r *rolloutRound) checkGeneration(ctx context.Context, f Fleet, profile, variant string, gen int) error {
	for _, c := range f.Clusters {
		if c.Variant != variant {
			continue
		}
		cs, err := kubernetes.NewForConfig(r.cs.Cluster(c.Name).RESTConfig())
		if err != nil {
			return err
		}
		cm, err := cs.CoreV1().ConfigMaps(f.Namespace(profile)).Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := cm.Data["generation"]; got != fmt.Sprint(gen) {
			return fmt.Errorf("cluster %s: %s", c.Name, describeCM(cm))
		}
	}
	return nil
}

func describeCM(cm *corev1.ConfigMap) string {
	return fmt.Sprintf("ConfigMap %s/%s has generation %q", cm.Namespace, cm.Name, cm.Data["generation"])
}

// limit pre-renders the fleet (untimed), then times the minimal program,
// with the bookkeeping for MethodFloor.
func (r *rolloutRound) limit(ctx context.Context, method, prefix string) ([]Sample, error) {
	f := r.fleet(prefix)
	dir := filepath.Join(r.dir, method)
	if err := WriteTree(dir, f.Files()); err != nil {
		return nil, err
	}
	objs, err := RenderObjects(ctx, os.DirFS(dir), filepath.Join(dir, ".helm"))
	if err != nil {
		return nil, err
	}
	kcs := map[string][]byte{}
	for _, c := range f.Clusters {
		kcs[c.Name] = c.Kubeconfig
	}
	before := r.requests(ctx)
	cpu := ReadCPUUse()
	waitProfiles := r.apiProfiles(ctx, method)
	l := Limit{Objects: objs, Kubeconfigs: kcs}
	if method == MethodFloor {
		l.Bookkeeping = &Bookkeeping{}
		for i := range f.Profiles {
			if DriftDetected(i) {
				l.Bookkeeping.Watched = append(l.Bookkeeping.Watched, f.Namespace(ProfileName(i)))
			}
		}
	}
	took, err := l.Run(ctx)
	used := ReadCPUUse().Sub(cpu)
	waitProfiles()
	if err != nil {
		return nil, err
	}
	reqs := r.perCluster(before, r.requests(ctx))
	return []Sample{{Method: method, Secs: took.Seconds(), Requests: reqs, CPU: used}}, r.verify(ctx, f)
}

// script times the scripted rollout with xargs -P parallel.
func (r *rolloutRound) script(ctx context.Context, method, prefix string, parallel int) ([]Sample, error) {
	f := r.fleet(prefix)
	dir := filepath.Join(r.dir, method)
	if err := WriteTree(dir, f.Files()); err != nil {
		return nil, err
	}
	s := Script{Dir: dir, Kubectl: r.o.Bins.Kubectl, Regatta: r.o.Bins.Regatta, HelmCacheDir: filepath.Join(dir, ".helm"),
		Kubeconfigs: r.cs.Kubeconfigs, Fleet: f}
	before := r.requests(ctx)
	took, err := s.Run(ctx, parallel, filepath.Join(r.dir, method+".log"))
	if err != nil {
		return nil, err
	}
	reqs := r.perCluster(before, r.requests(ctx))
	return []Sample{{Method: method, Secs: took.Seconds(), Requests: reqs}}, r.verify(ctx, f)
}
