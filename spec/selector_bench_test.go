package spec

import (
	"fmt"
	"testing"
)

// benchSelector is a typical cluster selector: two matchLabels and an In
// expression.
func benchSelector() LabelSelector {
	return LabelSelector{
		MatchLabels: map[string]string{"env": "prod", "tier": "gold"},
		MatchExpressions: []LabelSelectorRequirement{
			{Key: "region", Operator: OpIn, Values: []string{"eu-1", "eu-2", "us-1"}},
		},
	}
}

// BenchmarkProfileMatches is the selector match a pass runs for every
// (profile, cluster): 20 profiles × 10,000 clusters is 200,000 calls.
func BenchmarkProfileMatches(b *testing.B) {
	sel, err := benchSelector().Compile()
	if err != nil {
		b.Fatal(err)
	}
	p := &Profile{Metadata: ObjectMeta{Name: "p"}, Spec: ProfileSpec{ClusterSelector: benchSelector()}, selector: sel}
	clusters := make([]map[string]string, 64)
	for i := range clusters {
		clusters[i] = map[string]string{"env": []string{"prod", "staging"}[i%2], "tier": "gold",
			"region": []string{"eu-1", "us-1", "ap-1"}[i%3], "name": fmt.Sprintf("c%04d", i), "kubernetes": "v1-37"}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Matches("c", clusters[i%len(clusters)])
	}
}

// BenchmarkSelectorCompile is the cost of compiling a cluster selector
// (render compiles overlay selectors on every request).
func BenchmarkSelectorCompile(b *testing.B) {
	s := benchSelector()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Compile(); err != nil {
			b.Fatal(err)
		}
	}
}
