package helm

import (
	"context"
	"testing"
)

// BenchmarkRenderCached measures a render with the index in memory and the
// archive on disk: load, dependencies, values, templates, steps.
func BenchmarkRenderCached(b *testing.B) {
	srv := newRepoServerB(b)
	r := New(Options{CacheDir: b.TempDir()})
	req := appRequest(srv.URL)
	if _, err := r.Render(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Render(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
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
