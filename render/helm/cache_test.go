package helm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDigestMismatchRefused(t *testing.T) {
	srv := newRepoServer(t)
	srv.tamper.Store(true)
	dir := t.TempDir()
	r := New(Options{CacheDir: dir})
	_, err := r.Render(context.Background(), appRequest(srv.URL))
	var de *DigestError
	if !errors.As(err, &de) || de.Want != "sha256:"+indexDigest(t, "fleet-app", "1.2.0") {
		t.Fatalf("got %v, want a DigestError", err)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, archiveKindRepo, "*.tgz")); len(matches) != 0 {
		t.Errorf("a refused archive was cached: %v", matches)
	}
	srv.tamper.Store(false)
	if _, err := r.Render(context.Background(), appRequest(srv.URL)); err != nil {
		t.Fatalf("after the repository is repaired: %v", err)
	}
}

func TestCacheServesWithoutHTTP(t *testing.T) {
	srv := newRepoServer(t)
	dir := t.TempDir()
	ctx := context.Background()
	r := New(Options{CacheDir: dir})
	first, err := r.Render(ctx, appRequest(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.requests.Load(); n != 2 {
		t.Errorf("first render made %d requests, want 2 (index, archive)", n)
	}
	// Same renderer: index from memory, archive from disk.
	if _, err := r.Render(ctx, appRequest(srv.URL)); err != nil {
		t.Fatal(err)
	}
	// A new process: index and archive from disk.
	r2 := New(Options{CacheDir: dir})
	again, err := r2.Render(ctx, appRequest(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.requests.Load(); n != 2 {
		t.Errorf("cached renders made %d more requests", n-2)
	}
	if again.ChartDigest != first.ChartDigest {
		t.Errorf("digest changed: %s vs %s", again.ChartDigest, first.ChartDigest)
	}
	// After the TTL only the index is fetched again.
	r2.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	if _, _, err := r2.Resolve(ctx, appRequest(srv.URL)); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Render(ctx, appRequest(srv.URL)); err != nil {
		t.Fatal(err)
	}
	if n := srv.requests.Load(); n != 3 {
		t.Errorf("after the TTL: %d requests in all, want 3 (one more index)", n)
	}
}

func TestCorruptCachedArchiveIsRefetched(t *testing.T) {
	srv := newRepoServer(t)
	dir := t.TempDir()
	r := New(Options{CacheDir: dir})
	if _, err := r.Render(context.Background(), appRequest(srv.URL)); err != nil {
		t.Fatal(err)
	}
	p := r.cache.archivePath(archiveKindRepo, "sha256:"+indexDigest(t, "fleet-app", "1.2.0"))
	if err := os.WriteFile(p, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Render(context.Background(), appRequest(srv.URL)); err != nil {
		t.Fatal(err)
	}
	if n := srv.requests.Load(); n != 3 {
		t.Errorf("%d requests, want 3 (index, archive, archive again)", n)
	}
}
