package helm

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentRenders shares one Renderer (and its caches) between
// goroutines rendering different clusters; run with -race.
func TestConcurrentRenders(t *testing.T) {
	srv := newRepoServer(t)
	r := newTestRenderer(t)
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := appRequest(srv.URL)
			req.ReleaseName = fmt.Sprintf("shop-%d", i)
			req.KubeVersion = fmt.Sprintf("v1.%d.0", 28+i%10)
			req.Values = map[string]any{"replicaCount": i + 1, "cache": map[string]any{"enabled": i%2 == 0}}
			res, err := r.Render(context.Background(), req)
			if err != nil {
				t.Error(err)
				return
			}
			d := find(all(res.Steps), "Deployment", req.ReleaseName+"-fleet-app")
			if got, _ := d.Object["spec"].(map[string]any)["replicas"].(int64); got != int64(i+1) {
				t.Errorf("render %d: replicas %v", i, got)
			}
		}()
	}
	wg.Wait()
	if n := srv.requests.Load(); n != 2 {
		t.Errorf("%d requests for 12 concurrent renders, want 2 (one index, one archive)", n)
	}
}
