package reconciler

import (
	"context"
	"fmt"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/metrics"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/repo"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	// When this binary was started as a chart render worker, serve.
	serveHelmWorker()
	serveSandboxWorker()
	log.SetOutput(io.Discard) // gitkit logs every request
	ctrllog.SetLogger(logr.Discard())
	// c36 listens on every loopback address: cluster entries reach it
	// through addresses of their own (identity_e2e_test.go).
	testenv.Main(m, testenv.Options{Clusters: []testenv.ClusterOptions{
		{Name: "c35", Version: "v1.35.4"},
		{Name: "c36", Version: "v1.36.3", APIServerFlags: []string{"--bind-address=0.0.0.0"}},
		{Name: "c37", Version: "v1.37.2"},
	}}, &env)
}

// fleetRepo is a fleet repository on a real Git server on loopback (HTTP,
// basic auth) with a working clone to commit in.
type fleetRepo struct{ *gitfleet.Repo }

func newFleetRepo(t *testing.T) *fleetRepo { return &fleetRepo{gitfleet.New(t)} }

const testKeyFile = "../render/sops/testdata/age.key"

// clusterFiles writes a cluster folder whose kubeconfig Secret is
// SOPS-encrypted with the test age key.
func clusterFiles(t *testing.T, name string, labels string) map[string]string {
	t.Helper()
	return entryFiles(t, name, labels, env.Cluster(name).Kubeconfig(), "")
}

// entryFiles writes the folder of a cluster entry reaching a cluster with
// kubeconfig kc (SOPS-encrypted with the test age key); spec is added to
// its spec.
func entryFiles(t *testing.T, name, labels string, kc []byte, spec string) map[string]string {
	t.Helper()
	keys, err := sops.LoadAgeKeyFile(testKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-kubeconfig\n  namespace: regatta-system\nstringData:\n  value: |\n%s",
		name, indent(string(kc), "    "))
	enc, err := sops.Encrypt("kubeconfig.yaml", []byte(secret), sops.SecretRegex, keys.Recipients())
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"clusters/" + name + "/cluster.yaml":    fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\n  labels: {%s}\nspec:\n  values: {greeting: hello-%s}\n%s", name, labels, name, spec),
		"clusters/" + name + "/kubeconfig.yaml": string(enc),
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// harness is a daemon wired as `regatta run` wires it.
type harness struct {
	d   *Daemon
	r   *Reconciler
	m   *metrics.Metrics
	src *repo.Source
}

func newHarness(t *testing.T, f *fleetRepo, opts func(*DaemonOptions)) *harness {
	t.Helper()
	return newHarnessWith(t, f, opts, nil)
}

// newHarnessWith is newHarness with apply options changed by aopts.
func newHarnessWith(t *testing.T, f *fleetRepo, opts func(*DaemonOptions), aopts func(*apply.Options)) *harness {
	t.Helper()
	keys, err := sops.LoadAgeKeyFile(testKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	src, err := repo.NewSource(repo.Options{URL: f.URL, Auth: repo.Auth{Username: gitfleet.User, Password: gitfleet.Password}})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	m := metrics.New()
	ao := apply.DefaultOptions()
	ao.Client.Timeout, ao.Client.DialTimeout = 5*time.Second, 2*time.Second
	ao.HealthTimeout, ao.HealthPollInterval, ao.Logger = 20*time.Second, 500*time.Millisecond, log
	if aopts != nil {
		aopts(&ao)
	}
	ctx, cancel := context.WithCancel(context.Background())
	am := apply.NewManager(ctx, ao)
	t.Cleanup(func() { am.Close(); cancel() })
	r := New(Options{Apply: am, Renderer: render.New(render.Options{Keys: keys}), Lua: lua.NewRunner(lua.Options{}),
		Keys: keys, Metrics: m, Log: log, ClusterTimeout: 5 * time.Second, HealthTimeout: 20 * time.Second})
	do := DaemonOptions{Source: src, Watch: repo.DefaultWatchOptions(), StatusBranch: "regatta/status",
		StatusAuthor: repo.Signature{Name: "regatta", Email: "regatta@example.com"}, ShutdownGrace: 10 * time.Second,
		StatusInterval: time.Second}
	if opts != nil {
		opts(&do)
	}
	return &harness{d: NewDaemon(r, do), r: r, m: m, src: src}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func clientset(t *testing.T, cluster string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Cluster(cluster).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// configMap returns a ConfigMap's data, or nil when it does not exist.
func configMap(t *testing.T, cluster, ns, name string) map[string]string {
	t.Helper()
	cm, err := clientset(t, cluster).CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data == nil {
		return map[string]string{}
	}
	return cm.Data
}

func configMapObj(t *testing.T, cluster, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := clientset(t, cluster).CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

func writeFile(dir, name, content string) error {
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// oneClusterFleet commits files and the folder of cluster c37 (env: prod)
// to a new fleet repository, and returns it with a daemon that writes no
// status.
func oneClusterFleet(t *testing.T, files map[string]string) (*fleetRepo, *harness) {
	t.Helper()
	f := newFleetRepo(t)
	for k, v := range clusterFiles(t, "c37", "env: prod") {
		files[k] = v
	}
	f.Commit("fleet", files)
	return f, newHarness(t, f, func(o *DaemonOptions) { o.StatusBranch = "" })
}
