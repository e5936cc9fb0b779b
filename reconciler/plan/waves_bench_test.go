package plan

import (
	"fmt"
	"testing"

	"github.com/regatta-dev/regatta/spec"
)

// layered returns n profiles in layers of width, each depending on two
// profiles of the layer before: a realistic infrastructure-then-apps graph.
func layered(n, width int) []*spec.Profile {
	ps := make([]*spec.Profile, n)
	for i := range ps {
		var deps []string
		if i >= width {
			prev := i - width
			deps = []string{fmt.Sprintf("p%03d", prev), fmt.Sprintf("p%03d", prev-prev%width+(prev+1)%width)}
		}
		ps[i] = profile(fmt.Sprintf("p%03d", i), map[string]string{"env": "prod"}, deps...)
	}
	return ps
}

// BenchmarkWaves is the graph sort of one cluster's matched profiles.
func BenchmarkWaves(b *testing.B) {
	for _, n := range []int{20, 200} {
		ps := layered(n, 5)
		b.Run(fmt.Sprintf("profiles=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Waves(ps); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMatchCluster is Match for one cluster against 20 profiles
// (selector matching, missing dependencies, waves).
func BenchmarkMatchCluster(b *testing.B) {
	ps := compiled(b, layered(20, 5)...)
	c := Cluster{Name: "c0001", Labels: map[string]string{"env": "prod", "region": "eu"}}
	b.ReportAllocs()
	for b.Loop() {
		Match(ps, c)
	}
}
