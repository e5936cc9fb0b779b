package apply_test

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

// bulk returns nsCount namespaces of perNS objects (the Namespace and
// ConfigMaps), one step per namespace.
func bulk(prefix string, nsCount, perNS int) []apply.Step {
	var steps []apply.Step
	for i := range nsCount {
		ns := fmt.Sprintf("%s-%d", prefix, i)
		objs := []*unstructured.Unstructured{namespace(ns)}
		for j := range perNS - 1 {
			objs = append(objs, configMap(ns, fmt.Sprintf("cm-%03d", j), map[string]string{"i": fmt.Sprint(j), "payload": "some configuration value"}))
		}
		steps = append(steps, step(fmt.Sprintf("addon-%d", i), objs...))
	}
	return steps
}

// minimalApply is the yardstick of the engineering guide: server-side apply
// of pre-rendered objects, 16 in flight, Namespaces first, no dry-run, no
// inventory, no health wait.
func minimalApply(b *testing.B, k client.Client, steps []apply.Step) {
	for _, st := range steps {
		if err := k.Patch(b.Context(), st.Objects[0], client.Apply, client.FieldOwner("minimal"), client.ForceOwnership); err != nil {
			b.Fatal(err)
		}
	}
	work := make(chan *unstructured.Unstructured)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for o := range work {
				if err := k.Patch(b.Context(), o, client.Apply, client.FieldOwner("minimal"), client.ForceOwnership); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for _, st := range steps {
		for _, o := range st.Objects[1:] {
			work <- o
		}
	}
	close(work)
	wg.Wait()
}

// BenchmarkApply300Objects alternates a first apply of 300 objects by regatta
// and by the minimal program, on fresh namespaces each time, and reports both
// (ms) and their ratio.
func BenchmarkApply300Objects(b *testing.B) {
	opts := testOptions()
	m := apply.NewManager(b.Context(), opts)
	defer m.Close()
	c, err := m.Cluster(mainCluster, env.Cluster(mainCluster).Kubeconfig())
	if err != nil {
		b.Fatal(err)
	}
	cfg := env.Cluster(mainCluster).RESTConfig()
	cfg.QPS, cfg.Burst = opts.Client.QPS, opts.Client.Burst
	k, err := client.New(cfg, client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var regatta, minimal, regattaCPU, minimalCPU time.Duration
	for i := range b.N {
		start, cpu := time.Now(), processCPU(b)
		res := c.Apply(b.Context(), apply.Request{Profile: fmt.Sprintf("bench-%d", i), RenderHash: "h", Steps: bulk(fmt.Sprintf("bench-r%d", i), 3, 100)})
		regatta += time.Since(start)
		regattaCPU += processCPU(b) - cpu
		if res.State != apply.StateApplied {
			b.Fatal(res)
		}
		start, cpu = time.Now(), processCPU(b)
		minimalApply(b, k, bulk(fmt.Sprintf("bench-m%d", i), 3, 100))
		minimal += time.Since(start)
		minimalCPU += processCPU(b) - cpu
	}
	b.ReportMetric(float64(regatta.Milliseconds())/float64(b.N), "regatta-ms/op")
	b.ReportMetric(float64(minimal.Milliseconds())/float64(b.N), "minimal-ms/op")
	b.ReportMetric(float64(regatta)/float64(minimal), "ratio")
	// CPU of this process (the client side; the API server is another
	// process): less sensitive to a busy machine than wall time.
	b.ReportMetric(float64(regattaCPU.Milliseconds())/float64(b.N), "regatta-cpu-ms/op")
	b.ReportMetric(float64(minimalCPU.Milliseconds())/float64(b.N), "minimal-cpu-ms/op")
}

// processCPU returns the user and system CPU time this process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
