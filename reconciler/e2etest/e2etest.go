// Package e2etest builds the daemon the end-to-end test packages
// (reconciler/controllerse2e, reconciler/rolloute2e) run against their
// real clusters: one daemon following a loopback Git fleet with the short
// intervals tests need, and the cluster folders that point at the clusters.
package e2etest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/repo"
)

// StatusBranch is where the tests' daemons commit status.
const StatusBranch = "regatta/status"

// Options tune a test's daemon; zero values take the defaults below.
type Options struct {
	// HealthTimeout: 20 s.
	HealthTimeout time.Duration
	// StatusInterval: 500 ms.
	StatusInterval time.Duration
	// Concurrency: 2.
	Concurrency int
	// FleetID, when set, scopes inventories and labels to a fleet of the
	// test's own on clusters that tests share.
	FleetID string
	// Now is the clock rollouts read (nil: time.Now).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.HealthTimeout == 0 {
		o.HealthTimeout = 20 * time.Second
	}
	if o.StatusInterval == 0 {
		o.StatusInterval = 500 * time.Millisecond
	}
	if o.Concurrency == 0 {
		o.Concurrency = 2
	}
	return o
}

// Run runs a daemon on the fleet repository at url until stop, which waits
// for it to end and closes it (later calls do nothing). The test's log
// receives the daemon's.
func Run(t *testing.T, url string, o Options) (*reconciler.Daemon, func()) {
	t.Helper()
	o = o.withDefaults()
	src, err := repo.NewSource(repo.Options{URL: url, Auth: repo.Auth{Username: gitfleet.User, Password: gitfleet.Password}})
	if err != nil {
		t.Fatal(err)
	}
	ao := apply.DefaultOptions()
	ao.Client.Timeout, ao.Client.DialTimeout = 5*time.Second, 2*time.Second
	ao.HealthTimeout, ao.HealthPollInterval = o.HealthTimeout, 200*time.Millisecond
	if o.FleetID != "" {
		ao.Fleet = apply.Fleet{ID: o.FleetID}
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := reconciler.Build(ctx, reconciler.Setup{
		Daemon: reconciler.DaemonOptions{
			Source:         src,
			Watch:          repo.WatchOptions{Interval: 200 * time.Millisecond},
			ShutdownGrace:  5 * time.Second,
			StatusBranch:   StatusBranch,
			StatusAuthor:   repo.Signature{Name: "regatta", Email: "regatta@example.com"},
			StatusInterval: o.StatusInterval,
		},
		Apply: ao,
		Reconciler: reconciler.Options{
			Renderer:       render.New(render.Options{}),
			Log:            slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})),
			Concurrency:    o.Concurrency,
			ClusterTimeout: 5 * time.Second,
			HealthTimeout:  o.HealthTimeout,
			Now:            o.Now,
		},
	})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	return d, func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
			d.Close()
		})
	}
}

// Start is Run until the test ends.
func Start(t *testing.T, url string, o Options) *reconciler.Daemon {
	t.Helper()
	d, stop := Run(t, url, o)
	t.Cleanup(stop)
	return d
}

// ClusterFiles is the folder of env's cluster name: cluster.yaml with the
// labels env: prod and stage: the name up to its first '-', and a plain
// kubeconfig Secret.
func ClusterFiles(env *testenv.Env, name string) map[string]string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(string(env.Cluster(name).Kubeconfig()), "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	stage, _, _ := strings.Cut(name, "-")
	return map[string]string{
		"clusters/" + name + "/cluster.yaml": fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\n  labels: {env: prod, stage: %s}\nspec: {}\n",
			name, stage),
		"clusters/" + name + "/kubeconfig.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-kubeconfig\n  namespace: regatta-system\nstringData:\n  value: |\n%s",
			name, b.String()),
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
