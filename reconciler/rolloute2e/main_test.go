// Package rolloute2e tests progressive rollouts end to end: a daemon, a
// Git server and nine real kube-apiservers in three stages.
package rolloute2e

import (
	"io"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/e2etest"
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
func (f *fleetRepo) status(name string) string { return f.Lookup(e2etest.StatusBranch, name) }

// clusterFiles is a cluster folder with a plain kubeconfig Secret.
func clusterFiles(name string) map[string]string { return e2etest.ClusterFiles(env, name) }

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
	return e2etest.Run(t, f.URL, e2etest.Options{Concurrency: 9, Now: now})
}
