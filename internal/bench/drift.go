package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// DriftTime is one out-of-band change and how long regatta took to undo it.
type DriftTime struct {
	Action  string  `json:"action"` // edit or delete
	Cluster string  `json:"cluster"`
	Object  string  `json:"object"`
	Secs    float64 `json:"seconds"`
	Err     string  `json:"error,omitempty"`
}

// drift edits and deletes ConfigMaps of drift-detected profiles out of band,
// one at a time, and times their restoration as seen by a watch.
func (s *steady) drift(ctx context.Context) ([]DriftTime, error) {
	var profiles []int
	for i := range s.fleet.Profiles {
		if DriftDetected(i) {
			profiles = append(profiles, i)
		}
	}
	var out []DriftTime
	for k := range s.o.DriftSamples {
		c := s.fleet.Clusters[k%len(s.fleet.Clusters)]
		ns := s.fleet.Namespace(ProfileName(profiles[k%len(profiles)]))
		name := fmt.Sprintf("config-%02d", k%configMaps)
		cs, err := kubernetes.NewForConfig(s.cs.Cluster(c.Name).RESTConfig())
		if err != nil {
			return out, err
		}
		action := []string{"edit", "delete"}[k%2]
		d := DriftTime{Action: action, Cluster: c.Name, Object: "ConfigMap/" + ns + "/" + name}
		secs, err := timeRestore(ctx, cs, ns, name, action)
		d.Secs = secs
		if err != nil {
			d.Err = err.Error()
		}
		out = append(out, d)
		time.Sleep(500 * time.Millisecond)
	}
	return out, nil
}

// timeRestore changes or deletes a ConfigMap and waits, on a watch opened
// before the change, for regatta to restore it.
func timeRestore(ctx context.Context, cs kubernetes.Interface, ns, name, action string) (float64, error) {
	cms := cs.CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	want := cm.Data["key-0"]
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: cm.ResourceVersion})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	if action == "edit" {
		cm.Data["key-0"] = "changed out of band"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
	} else {
		err = cms.Delete(ctx, name, metav1.DeleteOptions{})
	}
	if err != nil {
		return 0, err
	}
	start := time.Now()
	for ev := range w.ResultChan() {
		got, ok := ev.Object.(*corev1.ConfigMap)
		if !ok || ev.Type == watch.Deleted {
			continue
		}
		if got.Data["key-0"] == want {
			return time.Since(start).Seconds(), nil
		}
	}
	return time.Since(start).Seconds(), fmt.Errorf("not restored within a minute")
}

// memory reads the child's resident memory, then measures a second
// `regatta run` that manages one cluster, for the cost of the others.
func (s *steady) memory(ctx context.Context, res *SteadyResult) error {
	m, err := readMemory(ctx, s.child)
	if err != nil {
		return err
	}
	res.Memory = m
	res.Memory.ClustersIn = len(s.fleet.Clusters)
	for _, name := range []string{"heap", "goroutine"} {
		path := filepath.Join(s.o.Dir, "regatta."+name+".pprof")
		if err := s.child.SaveProfile(ctx, name, path); err != nil {
			s.o.Logf("daemon: %s profile: %v", name, err)
		}
	}
	one, err := s.oneCluster(ctx)
	if err != nil {
		return err
	}
	res.Memory.RSSOne, res.Memory.HeapOne = one.RSS, one.HeapInuse
	return nil
}

func readMemory(ctx context.Context, c *Child) (Memory, error) {
	rss, hwm, err := ProcStatus(c.Pid())
	if err != nil {
		return Memory{}, err
	}
	m, err := c.Metrics(ctx)
	if err != nil {
		return Memory{}, err
	}
	wrss, workers, err := ChildrenRSS(c.Pid())
	if err != nil {
		return Memory{}, err
	}
	anon, err := ProcAnon(c.Pid())
	if err != nil {
		return Memory{}, err
	}
	cpu, err := ProcCPU(c.Pid())
	if err != nil {
		return Memory{}, err
	}
	return Memory{RSS: rss, HWM: hwm, Anon: anon, HeapInuse: int64(m["go_memstats_heap_inuse_bytes"]),
		StackInuse: int64(m["go_memstats_stack_inuse_bytes"]), NextGC: int64(m["go_memstats_next_gc_bytes"]),
		GoSys: int64(m["go_memstats_sys_bytes"]), CPUSecs: cpu.Seconds(), WorkersRSS: wrss, Workers: workers}, nil
}

// oneCluster runs `regatta run` on a fleet of one cluster (its own
// namespaces) until a drift pass after convergence, and reads its memory.
func (s *steady) oneCluster(ctx context.Context) (Memory, error) {
	s.child.Stop()
	f := s.fleet
	f.Prefix, f.Clusters = "one", f.Clusters[:1]
	g, err := StartGitRepo(ctx, filepath.Join(s.o.Dir, "git-one"))
	if err != nil {
		return Memory{}, err
	}
	defer g.Close()
	if _, err := g.Commit(ctx, "fleet", f.Files()); err != nil {
		return Memory{}, err
	}
	c, err := StartChild(ChildOptions{Regatta: s.o.Bins.Regatta, RepoURL: g.URL(), DriftInterval: s.o.DriftInterval,
		Dir: filepath.Join(s.o.Dir, "regatta-one"), ChartRepo: f.ChartRepo, Args: s.o.Args})
	if err != nil {
		return Memory{}, err
	}
	defer c.Stop()
	if err := c.WaitPasses(ctx, 2, 1, 5*time.Minute+2*s.o.DriftInterval, s.idlePoll()); err != nil {
		return Memory{}, err
	}
	return readMemory(ctx, c)
}
