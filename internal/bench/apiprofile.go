package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// APIServerProfileFlags turn the API servers' /debug/pprof on, for
// RolloutOptions.APIServerProfile (off by default, as in the test suite).
var APIServerProfileFlags = []string{"--profiling=true"}

// apiProfile collects a CPU profile of every API server of a round over a
// fixed window. A CPU profile is written when its window ends, so the
// window is fixed in advance and wait blocks until it is over: the method
// measured inside it must end first, and whatever runs after it is kept
// out of the profiles.
type apiProfile struct {
	wg   sync.WaitGroup
	errs []error
	mu   sync.Mutex
}

// startAPIProfiles starts a window-long CPU profile of each cluster's API
// server, written to dir/<prefix>-<cluster>.pprof.
func startAPIProfiles(ctx context.Context, cs *Clusters, dir, prefix string, window time.Duration) *apiProfile {
	p := &apiProfile{}
	for _, c := range cs.Fleet {
		cfg := cs.Cluster(c.Name).RESTConfig()
		path := filepath.Join(dir, fmt.Sprintf("%s-%s.pprof", prefix, c.Name))
		p.wg.Go(func() {
			if err := fetchProfile(ctx, cfg, window, path); err != nil {
				p.mu.Lock()
				p.errs = append(p.errs, fmt.Errorf("cluster %s: %w", c.Name, err))
				p.mu.Unlock()
			}
		})
	}
	return p
}

func fetchProfile(ctx context.Context, cfg *rest.Config, window time.Duration, path string) error {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", cfg.Host, int(window.Seconds()))
	if err := download(ctx, client, url, path); err != nil {
		return fmt.Errorf("%w (the API servers need %v)", err, APIServerProfileFlags)
	}
	return nil
}

// wait blocks until every profile is written and logs what failed.
func (p *apiProfile) wait(logf func(string, ...any)) {
	p.wg.Wait()
	for _, err := range p.errs {
		logf("API server profile: %v", err)
	}
}
