package repo

import (
	"context"
	"runtime"
	"testing"
)

// BenchmarkStatusCommitRetained commits and pushes, over HTTP, status
// commits of 1,000 changed records from an in-memory clone, as a daemon
// does for as long as it runs, and reports the heap each one leaves
// behind (retained-B/op, after a GC): 0.95 MiB before the clone forgot
// what nothing reads and pushes closed their connections, a few hundred
// bytes since.
func BenchmarkStatusCommitRetained(b *testing.B) {
	src, _, rev := httpSource(b, b.TempDir())
	ctx := context.Background()
	commit := func(i int) {
		if _, err := src.CommitAndPush(ctx, statusRequest(statusFiles(1000, i), rev)); err != nil {
			b.Fatal(err)
		}
	}
	commit(-1) // the first status commit: the tree every later one builds on
	heap := func() float64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc)
	}
	before := heap()
	i := 0
	for b.Loop() {
		commit(i)
		i++
	}
	b.ReportMetric((heap()-before)/float64(i), "retained-B/op")
	runtime.KeepAlive(src) // what it holds is what is measured
}
