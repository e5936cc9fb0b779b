package bench

import (
	"context"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/render"
)

// TestLogicalHost: every logical cluster of a 70,000-cluster fleet gets a
// distinct loopback address outside 127.0.0.x, with no octet 0 or 255.
func TestLogicalHost(t *testing.T) {
	for i, want := range map[int]string{0: "127.1.1.1", 249: "127.1.1.250", 250: "127.1.2.1", 62499: "127.1.250.250", 62500: "127.2.1.1"} {
		if got := LogicalHost(i); got != want {
			t.Errorf("LogicalHost(%d) = %s, want %s", i, got, want)
		}
	}
	seen := map[string]int{}
	for i := range 70000 {
		h := LogicalHost(i)
		ip := net.ParseIP(h).To4()
		if ip == nil || !ip.IsLoopback() {
			t.Fatalf("LogicalHost(%d) = %s: not a loopback address", i, h)
		}
		if ip[1] == 0 || ip[2] == 0 || ip[3] == 0 || ip[1] == 255 || ip[2] == 255 || ip[3] == 255 {
			t.Fatalf("LogicalHost(%d) = %s: octet 0 or 255", i, h)
		}
		if j, ok := seen[h]; ok {
			t.Fatalf("LogicalHost(%d) = LogicalHost(%d) = %s", i, j, h)
		}
		seen[h] = i
	}
}

// TestServersFor: clusters spread round robin, no server over perServer.
func TestServersFor(t *testing.T) {
	for _, c := range []struct{ n, per, want int }{{10, 1, 10}, {10, 10, 1}, {100, 250, 1}, {1000, 250, 4}, {1001, 250, 5}, {2000, 250, 8}, {5, 0, 1}} {
		s := ServersFor(c.n, c.per)
		if s != c.want {
			t.Errorf("ServersFor(%d, %d) = %d, want %d", c.n, c.per, s, c.want)
		}
		count := make([]int, s)
		for i := range c.n {
			count[ServerOf(i, s)]++
		}
		for srv, k := range count {
			if c.per > 0 && k > c.per {
				t.Errorf("n=%d per=%d: server %d holds %d", c.n, c.per, srv, k)
			}
		}
	}
}

// TestNewLatency: p50, p99 and the last of per-cluster times, and the
// clusters that never arrived.
func TestNewLatency(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*100*time.Millisecond)
	}
	l := NewLatency(ds, 101)
	if l.Clusters != 100 || l.Missing != 1 || math.Abs(l.P50-5.05) > 1e-9 || math.Abs(l.P99-9.901) > 1e-9 || l.Last != 10 {
		t.Errorf("NewLatency = %+v, want 100 clusters, 1 missing, p50 5.05, p99 9.901, last 10", l)
	}
	if l := NewLatency(nil, 3); l.Missing != 3 || l.P50 != 0 {
		t.Errorf("NewLatency(nil, 3) = %+v", l)
	}
}

// TestSlope: least squares through (100, 1), (500, 3), (1000, 5.5).
func TestSlope(t *testing.T) {
	got := Slope([]float64{100, 500, 1000}, []float64{1, 3, 5.5})
	if math.Abs(got-0.005) > 2e-4 {
		t.Errorf("Slope = %v, want ≈0.005", got)
	}
	if !math.IsNaN(Slope([]float64{1}, []float64{1})) || !math.IsNaN(Slope([]float64{2, 2}, []float64{1, 3})) {
		t.Error("Slope of one point or one x must be NaN")
	}
}

// TestScaleFleetRenders: the fleet loads, each cluster is namespace-scoped
// to its own namespace, both profiles render Objects objects into it (fb
// through postBuild), markers at the asked generation.
func TestScaleFleetRenders(t *testing.T) {
	f := ScaleFleet{Clusters: []string{LogicalName(0), LogicalName(1), LogicalName(2)}, Objects: 5}
	files := f.Files(3, true)
	if !strings.Contains(files["clusters/l00001/cluster.yaml"], "namespaces: [s-l00001]") {
		t.Fatalf("cluster.yaml:\n%s", files["clusters/l00001/cluster.yaml"])
	}
	r := render.New(render.Options{})
	st, err := PlanFleet(context.Background(), mapFS(files), "rev1", r, 2, func(c string, res []*render.Result) {
		for _, x := range res {
			objs := x.Objects()
			if len(objs) != f.Objects {
				t.Errorf("%s/%s: %d objects, want %d", c, x.Profile, len(objs), f.Objects)
			}
			for _, o := range objs {
				if ns := o.GetNamespace(); ns != LogicalNamespace(c) {
					t.Errorf("%s/%s: %s %s in namespace %q", c, x.Profile, o.GetKind(), o.GetName(), ns)
				}
				if o.GetName() == FleetMarker(x.Profile) {
					gen, _, _ := unstructured.NestedString(o.Object, "data", "generation")
					if want := map[string]string{FleetDriftProfile: "3", FleetKustomizeProfile: "0"}[x.Profile]; gen != want {
						t.Errorf("%s/%s: marker generation %q, want %q", c, x.Profile, gen, want)
					}
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Pairs != 6 || st.Objects != 30 {
		t.Errorf("stats %+v, want 6 pairs, 30 objects", st)
	}
	if got := f.Files(0, false); len(got) != 3 {
		t.Errorf("clusters only: %d files, want 3", len(got))
	}
}
