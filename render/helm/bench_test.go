package helm

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time of this process and its reaped children.
func cpuTime(b *testing.B) time.Duration {
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		b.Fatal("getrusage")
	}
	total := time.Duration(0)
	for _, tv := range []syscall.Timeval{self.Utime, self.Stime, children.Utime, children.Stime} {
		total += time.Duration(tv.Nano())
	}
	return total
}

// benchRenders renders req b.N times and reports the CPU time per render,
// workers included (they are stopped, hence reaped, before measuring):
// wall time on a shared machine says little.
func benchRenders(b *testing.B, r *Renderer, req Request, each func()) {
	if _, err := r.Render(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	_ = r.Close()
	b.ResetTimer()
	start := cpuTime(b)
	for i := 0; i < b.N; i++ {
		if _, err := r.Render(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		each()
	}
	_ = r.Close()
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkRenderCached measures a render with the index in memory and the
// archive on disk: load, dependencies, values, templates, steps.
func BenchmarkRenderCached(b *testing.B) {
	srv := newRepoServerB(b)
	r := New(Options{CacheDir: b.TempDir()})
	benchRenders(b, r, appRequest(srv.URL), func() {})
}

// BenchmarkRenderCachedWorker is BenchmarkRenderCached with the chart
// templates rendered in a worker process (reused between renders).
func BenchmarkRenderCachedWorker(b *testing.B) {
	srv := newRepoServerB(b)
	r := New(Options{CacheDir: b.TempDir(), Worker: testWorker(b)})
	benchRenders(b, r, appRequest(srv.URL), func() {})
}

// BenchmarkWorkerStart measures a render with a new worker each time (the
// cost after a worker was killed).
func BenchmarkWorkerStart(b *testing.B) {
	srv := newRepoServerB(b)
	r := New(Options{CacheDir: b.TempDir(), Worker: testWorker(b)})
	benchRenders(b, r, appRequest(srv.URL), func() { _ = r.Close() })
}

// BenchmarkResolveCached measures the cache-key lookup.
func BenchmarkResolveCached(b *testing.B) {
	srv := newRepoServerB(b)
	r := New(Options{CacheDir: b.TempDir()})
	req := appRequest(srv.URL)
	req.ChartVersion = "~1.2"
	for i := 0; i < b.N; i++ {
		if _, _, err := r.Resolve(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderCold measures a first render: index and archive over HTTP
// (loopback) into an empty cache.
func BenchmarkRenderCold(b *testing.B) {
	srv := newRepoServerB(b)
	req := appRequest(srv.URL)
	for i := 0; i < b.N; i++ {
		r := New(Options{CacheDir: b.TempDir()})
		if _, err := r.Render(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
