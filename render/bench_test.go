package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"testing"
	"time"
)

// BenchmarkRenderCached renders the fleet profile (a kustomize and a
// plain add-on with overlays) for rotating clusters, all from the cache:
// the cost per cluster and reconcile pass once a revision is rendered.
func BenchmarkRenderCached(b *testing.B) { renderRotating(b, false) }

// BenchmarkRenderCachedStored is BenchmarkRenderCached with every result
// out of use (as a cluster's own results between drift intervals): each
// hit decodes the stored JSON.
func BenchmarkRenderCachedStored(b *testing.B) { renderRotating(b, true) }

func renderRotating(b *testing.B, outOfUse bool) {
	fsys := memRepo(b)
	prof := loadProfile(b, fsys, "fleet")
	r := New(Options{})
	clusters := make([]ClusterFacts, 1000)
	for i := range clusters {
		clusters[i] = fleetCluster(i)
	}
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		if outOfUse {
			r.cache.hot.expire(time.Now().Add(time.Minute))
		}
		req := Request{FS: fsys, Revision: "rev1", Profile: prof, Cluster: clusters[i%len(clusters)]}
		if _, err := r.Render(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	_, misses := r.CacheStats()
	b.ReportMetric(float64(misses), "misses")
}

// BenchmarkRenderUncached is the cost of one render with the cache off.
func BenchmarkRenderUncached(b *testing.B) {
	fsys := memRepo(b)
	prof := loadProfile(b, fsys, "fleet")
	r := New(Options{CacheBytes: -1})
	for b.Loop() {
		if _, err := r.Render(context.Background(), Request{FS: fsys, Profile: prof, Cluster: fleetCluster(0)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheKey computes a request's key once memo entries exist:
// with a revision (key parts reused), with Git-style tree hashes, and by
// hashing file contents on every call.
func BenchmarkCacheKey(b *testing.B) {
	fsys := memRepo(b)
	prof := loadProfile(b, fsys, "fleet")
	treeHash := func(p string) (string, error) { // stands in for a Git tree lookup
		if _, err := fs.Stat(fsys, p); err != nil {
			return "", err
		}
		sum := sha256.Sum256([]byte(p))
		return hex.EncodeToString(sum[:20]), nil
	}
	for _, c := range []struct {
		name     string
		revision string
		tree     func(string) (string, error)
	}{
		{"revision", "rev1", nil},
		{"treehash", "", treeHash},
		{"content", "", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := New(Options{})
			req := Request{FS: fsys, Revision: c.revision, Profile: prof, Cluster: fleetCluster(0), TreeHash: c.tree}
			for i := range 3 {
				req.Cluster = fleetCluster(i)
				if _, err := r.Render(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; b.Loop(); i++ {
				req.Cluster = fleetCluster(i % 3)
				p, err := New(Options{}).newPlan(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				if _, known, err := r.inputKey(context.Background(), p); err != nil || !known {
					b.Fatal(fmt.Sprint("key not computable: ", err))
				}
			}
		})
	}
}
