// Package controllerse2e tests the daemon end to end on clusters that
// behave like real ones: each has kube-controller-manager, kube-scheduler
// and kwok nodes (internal/testenv Controllers), so Deployments become
// Available through their ReplicaSets and Pods, Jobs complete or fail,
// the garbage collector takes children and the namespace controller
// empties namespaces. Workloads fail by their image (registry.test/crash,
// never-ready), never by status a test writes.
package controllerse2e

import (
	"context"
	"fmt"
	"io"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/e2etest"
	"github.com/regatta-dev/regatta/reconciler/status"
)

var env *testenv.Env

// The two controller-backed clusters: a canary and a production cluster.
const (
	canary = "canary-1"
	prod   = "prod-1"
)

func TestMain(m *testing.M) {
	log.SetOutput(io.Discard) // gitkit logs every request
	ctrllog.SetLogger(logr.Discard())
	ctl := &testenv.Controllers{Nodes: 2}
	testenv.Main(m, testenv.Options{Clusters: []testenv.ClusterOptions{
		{Name: canary, Controllers: ctl},
		{Name: prod, Controllers: ctl},
	}}, &env)
}

// fleetRepo is a fleet repository on a loopback Git server with a working
// clone to commit in.
type fleetRepo struct{ *gitfleet.Repo }

// newFleet commits files and the folders of the given clusters to a new
// fleet repository.
func newFleet(t *testing.T, files map[string]string, clusters ...string) *fleetRepo {
	t.Helper()
	f := &fleetRepo{gitfleet.New(t)}
	for _, c := range clusters {
		for k, v := range clusterFiles(c) {
			files[k] = v
		}
	}
	f.Commit("fleet", files)
	return f
}

// clusterFiles is a cluster folder with a plain kubeconfig Secret; the
// cluster's labels are env: prod and stage: canary or prod.
func clusterFiles(name string) map[string]string { return e2etest.ClusterFiles(env, name) }

// status returns a file of the status branch ("" when there is none yet).
func (f *fleetRepo) status(name string) string { return f.Lookup(e2etest.StatusBranch, name) }

// pair returns the status branch's record of a (cluster, profile) pair;
// its State is "" while there is none.
func (f *fleetRepo) pair(t *testing.T, cluster, profile string) status.Profile {
	t.Helper()
	var cs status.ClusterStatus
	if err := yaml.Unmarshal([]byte(f.status("status/clusters/"+cluster+".yaml")), &cs); err != nil {
		t.Fatalf("status of cluster %s: %v", cluster, err)
	}
	for _, p := range cs.Profiles {
		if p.Name == profile {
			return p
		}
	}
	return status.Profile{}
}

// waitPair waits until the pair's recorded state is state.
func (f *fleetRepo) waitPair(t *testing.T, within time.Duration, cluster, profile, state string) status.Profile {
	t.Helper()
	var p status.Profile
	testenv.Eventually(t, within, func(context.Context) error {
		if p = f.pair(t, cluster, profile); p.State != state {
			return fmt.Errorf("pair %s/%s is %q (%s), want %s", cluster, profile, p.State, p.Message, state)
		}
		return nil
	})
	return p
}

// daemonOptions tune a test's daemon.
type daemonOptions struct {
	healthTimeout time.Duration
}

// startDaemon runs a daemon on the repository until the test ends, in a
// fleet of the test's own.
func startDaemon(t *testing.T, f *fleetRepo, o daemonOptions) *reconciler.Daemon {
	t.Helper()
	if o.healthTimeout == 0 {
		o.healthTimeout = 60 * time.Second
	}
	// A fleet of its own: a test's daemon neither lists nor withdraws what
	// the earlier tests' daemons left on the shared clusters.
	return e2etest.Start(t, f.URL, e2etest.Options{HealthTimeout: o.healthTimeout, StatusInterval: 300 * time.Millisecond, FleetID: fleetID(t)})
}

// fleetID is a label value naming the test.
func fleetID(t *testing.T) string {
	id := strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))
	return id[:min(len(id), 40)]
}

func clientset(t *testing.T, cluster string) *kubernetes.Clientset {
	t.Helper()
	cfg := env.Cluster(cluster).RESTConfig()
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// profile is a profile of one manifests add-on, selecting clusters by
// labels; extra is added to its spec.
func profile(name, selector, path, extra string) string {
	return fmt.Sprintf(`apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: %s}
spec:
  clusterSelector: {matchLabels: {%s}}
%s  addons:
  - name: %s
    manifests: {path: %s}
`, name, selector, extra, name, path)
}

// deployment is a Deployment manifest; replicas 0 leaves them out.
func deployment(ns, name, image string, replicas int, extra string) string {
	r := ""
	if replicas > 0 {
		r = fmt.Sprintf("  replicas: %d\n", replicas)
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: %s}
spec:
%s%s  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
      containers: [{name: main, image: %q}]
`, name, ns, r, extra, name, name, image)
}

func namespace(name string) string {
	return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + "}\n"
}
