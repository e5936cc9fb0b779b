package metrics

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkPairStateHeap reports the heap that regatta_pair_state keeps
// per pair (nine states, as the reconciler exports), and the cost of a
// scrape of 1,000 pairs.
func BenchmarkPairStateHeap(b *testing.B) {
	all := []string{"Applied", "Progressing", "WaitingForDependency", "Failed", "Conflict", "DryRun", "Withdrawn", "Paused", "WaitingForRollout"}
	const pairs = 1000
	names := make([]string, pairs)
	for i := range names {
		names[i] = fmt.Sprintf("c%04d", i)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := New()
	for _, c := range names {
		m.SetPairState(c, "apps", "Applied", all)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ResetTimer()
	for range b.N {
		if _, err := m.Registry.Gather(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/pairs, "heap-B/pair")
	runtime.KeepAlive(m)
}
