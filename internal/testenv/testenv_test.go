package testenv_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// env holds three bare clusters, one per supported minor version, and one
// controller-backed cluster, started once.
var env *testenv.Env

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{Clusters: []testenv.ClusterOptions{
		{Name: "v135", Version: "v1.35"},
		{Name: "v136", Version: "v1.36"},
		{Name: "v137", Version: "v1.37"},
		{Name: ctlCluster, Controllers: &testenv.Controllers{}},
	}}, &env)
}

func TestReportStartup(t *testing.T) {
	t.Logf("%d clusters started in %s", len(env.Clusters()), env.StartupTime().Round(time.Millisecond))
	for _, c := range env.Clusters() {
		rss, err := c.RSS()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("cluster %s (%s) at %s: kube-apiserver RSS %d MiB", c.Name(), c.Version(), c.URL(), rss>>20)
	}
	rss, err := env.EtcdRSS()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd RSS %d MiB", rss>>20)
}

func TestClustersReportTheirVersions(t *testing.T) {
	for name, minor := range map[string]string{"v135": "35", "v136": "36", "v137": "37"} {
		t.Run(name, func(t *testing.T) {
			c := env.Cluster(name)
			got := serverVersion(t, c.RESTConfig())
			want := "v1." + minor + "."
			if !strings.HasPrefix(got.GitVersion, want) || got.GitVersion != c.Version() {
				t.Errorf("cluster %s reports gitVersion %s, want %s (started as %s)", name, got.GitVersion, want+"x", c.Version())
			}
			if got.Major != "1" || got.Minor != minor {
				t.Errorf("cluster %s reports major.minor %s.%s, want 1.%s", name, got.Major, got.Minor, minor)
			}
		})
	}
}

func TestKubeconfigAuthenticatesAsAdmin(t *testing.T) {
	c := env.Cluster("v136")
	cfg, err := clientcmd.RESTConfigFromKubeConfig(c.Kubeconfig())
	if err != nil {
		t.Fatalf("parse kubeconfig: %v", err)
	}
	if _, err := clientset(t, cfg).CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatalf("list namespaces with the kubeconfig: %v", err)
	}
}

func TestRBACAndTokenAuthAreEnforced(t *testing.T) {
	c := env.Cluster("v137")
	nobody := c.RESTConfig()
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
	_, err := clientset(t, nobody).CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("listing namespaces as a user without roles: got %v, want Forbidden", err)
	}
	wrong := c.RESTConfig()
	wrong.BearerToken = "not-a-token"
	_, err = clientset(t, wrong).CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("listing namespaces with a wrong token: got %v, want Unauthorized", err)
	}
}

func TestClustersAreIndependent(t *testing.T) {
	name := uniqueName("independent")
	createNamespace(t, env.Cluster("v136"), name)
	for _, other := range []string{"v135", "v137"} {
		_, err := clientset(t, env.Cluster(other).RESTConfig()).CoreV1().Namespaces().Get(t.Context(), name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s on cluster %s: got %v, want NotFound", name, other, err)
		}
	}
}

func TestStopAndRestartWithAnotherVersion(t *testing.T) {
	for _, perCluster := range []bool{false, true} {
		t.Run(fmt.Sprintf("EtcdPerCluster=%t", perCluster), func(t *testing.T) {
			e := testenv.StartT(t, testenv.Options{
				Clusters:       []testenv.ClusterOptions{{Name: "upgrade", Version: "v1.36"}},
				EtcdPerCluster: perCluster,
			})
			stopAndRestart(t, e.Cluster("upgrade"), "v1.37")
		})
	}
}

func stopAndRestart(t *testing.T, c *testenv.Cluster, newVersion string) {
	ns := uniqueName("persists")
	createNamespace(t, c, ns)
	kubeconfig := c.Kubeconfig()

	c.Stop()
	if c.Running() {
		t.Fatal("cluster still running after Stop")
	}
	if _, err := discovery(t, c.RESTConfig()).ServerVersion(); err == nil {
		t.Fatal("stopped cluster still answers")
	}

	begin := time.Now()
	if err := c.Start(t.Context(), newVersion); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted as %s in %s", c.Version(), time.Since(begin).Round(time.Millisecond))
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if got := serverVersion(t, cfg).GitVersion; !strings.HasPrefix(got, newVersion+".") {
		t.Errorf("after restart the cluster reports %s, want %s.x", got, newVersion)
	}
	if _, err := clientset(t, cfg).CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace %s after restart: %v", ns, err)
	}
}

func TestStopRemovesProcessesAndFiles(t *testing.T) {
	e := testenv.StartT(t, testenv.Options{
		Clusters:     []testenv.ClusterOptions{{Name: "short"}},
		APIServerEnv: []string{"GOGC=50"},
	})
	c := e.Cluster("short")
	e.Stop()
	if c.Running() {
		t.Error("cluster still running after Env.Stop")
	}
	if _, err := os.Stat(e.Dir()); !os.IsNotExist(err) {
		t.Errorf("environment folder %s after Env.Stop: %v, want it removed", e.Dir(), err)
	}
	if _, err := discovery(t, c.RESTConfig()).ServerVersion(); err == nil {
		t.Error("cluster still answers after Env.Stop")
	}
}

func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
}

func createNamespace(t *testing.T, c *testenv.Cluster, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := clientset(t, c.RESTConfig()).CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s on cluster %s: %v", name, c.Name(), err)
	}
}
