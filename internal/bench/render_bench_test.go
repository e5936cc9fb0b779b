package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRenderHealthFleet renders the health phase's fleet (six
// clusters, ten Kustomize profiles with an overlay per variant: 30 builds
// of 31 objects each) with a fresh renderer per iteration: the render
// regatta does in the timed window of the health phase, which the minimal
// program does untimed.
func BenchmarkRenderHealthFleet(b *testing.B) {
	f := Fleet{Style: StyleOverlays, Prefix: "hr", Clusters: NewClusters(6), Profiles: 10, Replicas: HealthReplicas}
	dir := b.TempDir()
	if err := WriteTree(dir, f.Files()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := RenderObjects(context.Background(), os.DirFS(dir), filepath.Join(dir, ".helm")); err != nil {
			b.Fatal(err)
		}
	}
}
