// Package rolloute2e tests progressive rollouts end to end: a daemon, a
// Git server and nine real kube-apiservers in three stages.
package rolloute2e

import (
	"context"
	"fmt"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/repo"
)

var env *testenv.Env

// The fleet: one canary, two staging and six production clusters.
var (
	canary     = []string{"canary-1"}
	staging    = []string{"staging-1", "staging-2"}
	production = []string{"prod-1", "prod-2", "prod-3", "prod-4", "prod-5", "prod-6"}
)

func allClusters() []string {
	return append(append(append([]string(nil), canary...), staging...), production...)
}

func stageOf(name string) string { return name[:strings.IndexByte(name, '-')] }

func TestMain(m *testing.M) {
	log.SetOutput(io.Discard)
	ctrllog.SetLogger(logr.Discard())
	var cs []testenv.ClusterOptions
	for _, n := range allClusters() {
		cs = append(cs, testenv.ClusterOptions{Name: n})
	}
	testenv.Main(m, testenv.Options{Clusters: cs, EtcdPerCluster: true, APIServerEnv: []string{"GOGC=50"}}, &env)
}

// fleetRepo is a fleet repository on a loopback Git server with a
// working clone to commit in.
type fleetRepo struct{ *gitfleet.Repo }

func newFleetRepo(t *testing.T) *fleetRepo { return &fleetRepo{gitfleet.New(t)} }

// status returns a file of the status branch ("" when there is none yet).
func (f *fleetRepo) status(name string) string { return f.Lookup("regatta/status", name) }

// clusterFiles is a cluster folder with a plain kubeconfig Secret.
func clusterFiles(name string) map[string]string {
	kc := env.Cluster(name).Kubeconfig()
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(string(kc), "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return map[string]string{
		"clusters/" + name + "/cluster.yaml": fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\n  labels: {env: prod, stage: %s}\nspec: {}\n",
			name, stageOf(name)),
		"clusters/" + name + "/kubeconfig.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-kubeconfig\n  namespace: regatta-system\nstringData:\n  value: |\n%s",
			name, b.String()),
	}
}

// startDaemon runs a daemon on the repository until the test ends.
func startDaemon(t *testing.T, f *fleetRepo) *reconciler.Daemon {
	t.Helper()
	d, stop := runDaemon(t, f)
	t.Cleanup(stop)
	return d
}

// runDaemon runs a daemon on the repository until stop, which waits for it
// to end (later calls do nothing); a test that restarts the daemon stops
// it itself, and registers stop for the end of the test too.
func runDaemon(t *testing.T, f *fleetRepo) (*reconciler.Daemon, func()) {
	t.Helper()
	return runDaemonAt(t, f, nil)
}

// runDaemonAt is runDaemon with the clock rollouts read (nil: time.Now).
func runDaemonAt(t *testing.T, f *fleetRepo, now func() time.Time) (*reconciler.Daemon, func()) {
	t.Helper()
	src, err := repo.NewSource(repo.Options{URL: f.URL, Auth: repo.Auth{Username: gitfleet.User, Password: gitfleet.Password}})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ao := apply.DefaultOptions()
	ao.Client.Timeout, ao.Client.DialTimeout = 5*time.Second, 2*time.Second
	ao.HealthTimeout, ao.HealthPollInterval = 20*time.Second, 200*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	d := reconciler.Build(ctx, reconciler.Setup{
		Daemon: reconciler.DaemonOptions{
			Source:         src,
			Watch:          repo.WatchOptions{Interval: 200 * time.Millisecond},
			ShutdownGrace:  5 * time.Second,
			StatusBranch:   "regatta/status",
			StatusAuthor:   repo.Signature{Name: "regatta", Email: "regatta@example.com"},
			StatusInterval: 500 * time.Millisecond,
		},
		Apply: ao,
		Reconciler: reconciler.Options{
			Renderer:       render.New(render.Options{}),
			Log:            logger,
			Concurrency:    9,
			ClusterTimeout: 5 * time.Second,
			HealthTimeout:  20 * time.Second,
			Now:            now,
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

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
