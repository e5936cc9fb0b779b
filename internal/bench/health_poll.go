package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// AvailablePoll polls every cluster's Deployments in the namespaces that
// start with Prefix+"-" until each cluster holds Want Deployments there,
// all Available (testenv.DeploymentAvailable).
type AvailablePoll struct {
	Configs map[string]*rest.Config
	Prefix  string
	Want    int
	// Every is the interval between two lists of one cluster.
	Every time.Duration
}

// AvailableTimes are when each cluster had every Deployment Available,
// from the start of the measurement.
type AvailableTimes struct {
	// Last is when the last cluster did.
	Last       time.Duration
	PerCluster map[string]time.Duration
}

// Wait polls from start until every cluster is done or ctx ends.
func (p AvailablePoll) Wait(ctx context.Context, start time.Time) (AvailableTimes, error) {
	out := AvailableTimes{PerCluster: map[string]time.Duration{}}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for name, cfg := range p.Configs {
		wg.Go(func() {
			t, err := p.waitCluster(ctx, cfg, start)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("cluster %s: %w", name, err))
				return
			}
			out.PerCluster[name] = t
			out.Last = max(out.Last, t)
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// Polled is a poll's answer.
type Polled struct {
	Times AvailableTimes
	Err   error
}

// Start runs Wait from start in the background; the channel yields its
// answer.
func (p AvailablePoll) Start(ctx context.Context, start time.Time) <-chan Polled {
	out := make(chan Polled, 1)
	go func() {
		t, err := p.Wait(ctx, start)
		out <- Polled{t, err}
	}()
	return out
}

// waitCluster lists one cluster's Deployments every p.Every.
func (p AvailablePoll) waitCluster(ctx context.Context, cfg *rest.Config, start time.Time) (time.Duration, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	tick := time.NewTicker(p.Every)
	defer tick.Stop()
	last := "no list yet"
	for {
		list, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
		if err == nil {
			var done bool
			if done, last = p.check(list.Items); done {
				return time.Since(start), nil
			}
		} else if ctx.Err() == nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%w: %s", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// check reports whether the prefix's Deployments are Want and all
// Available, else what is missing.
func (p AvailablePoll) check(items []appsv1.Deployment) (bool, string) {
	n, avail := 0, 0
	var waiting []string
	for i := range items {
		d := &items[i]
		if !strings.HasPrefix(d.Namespace, p.Prefix+"-") {
			continue
		}
		n++
		if testenv.DeploymentAvailable(d) {
			avail++
		} else if len(waiting) < 3 {
			waiting = append(waiting, d.Namespace+"/"+d.Name)
		}
	}
	if n == p.Want && avail == n {
		return true, ""
	}
	return false, fmt.Sprintf("%d of %d Deployments Available (%d exist; waiting: %s)", avail, p.Want, n, strings.Join(waiting, ", "))
}
