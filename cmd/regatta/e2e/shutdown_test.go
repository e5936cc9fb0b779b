package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestSIGTERMUnderLeaderElection stops regatta as a rolling update of the
// chart does, in both replica modes: the process holds its Lease in a real
// management cluster, one cluster of the fleet is applied and another is
// unreachable, status commits wait for an hour, and SIGTERM arrives. The
// replica must finish its grace period, write the final status commit
// (the only one: the record of the applied revision), release its Lease
// and exit 0.
func TestSIGTERMUnderLeaderElection(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}, {Name: "c0"}}})
	mgmt, err := kubernetes.NewForConfig(env.Cluster("mgmt").RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	c0, err := kubernetes.NewForConfig(env.Cluster("c0").RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	kubeconfigSecret(t, mgmt, env.Cluster("c0"))
	goneSecret(t, mgmt, "gone", freePort(t))
	dir := t.TempDir()
	mgmtKC := mgmtKubeconfig(t, dir, env.Cluster("mgmt"))
	for _, mode := range []string{"standby", "shard"} {
		t.Run(mode, func(t *testing.T) {
			repo := newRepo(t)
			files := map[string]string{
				"profiles/p.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: p}\n" +
					"spec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: cm\n    manifests: {path: addons/cm}\n",
				"addons/cm/cm.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stop-%s, namespace: default}\ndata: {mode: %s}\n", mode, mode),
			}
			for k, v := range clusterFile("c0") {
				files[k] = v
			}
			for k, v := range clusterFile("gone") {
				files[k] = v
			}
			rev := repo.commit(t, "fleet", files)
			args := []string{"--repo", repo.bare, "--management-kubeconfig", mgmtKC, "--leader-elect-namespace", "default",
				"--replicas-mode", mode, "--interval", "500ms", "--status-interval", "1h", "--cluster-timeout", "2s",
				"--shutdown-grace", "5s", "--log-level", "info"}
			p := startRegatta(t, "regatta-0", dir, args...)
			testenv.WaitFor(t, 60*time.Second, "the ConfigMap on c0", func() bool {
				_, err := c0.CoreV1().ConfigMaps("default").Get(context.Background(), "stop-"+mode, metav1.GetOptions{})
				return err == nil
			})
			if held := heldLeases(t, mgmt); len(held) == 0 {
				t.Fatalf("no Lease held in the management cluster while regatta runs")
			}
			p.kill(syscall.SIGTERM)
			logText, _ := os.ReadFile(filepath.Join(dir, "regatta-0.log"))
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d after SIGTERM, want 0; log:\n%s", code, logText)
			}
			rec, err := gitOut(repo.bare, "show", "regatta/status:status/clusters/c0.yaml")
			if err != nil || !strings.Contains(rec, "sourceRevision: "+rev) {
				t.Errorf("no final status record of %s for c0 (%v):\n%s\nlog:\n%s", rev, err, rec, logText)
			}
			if held := heldLeases(t, mgmt); len(held) > 0 {
				t.Errorf("Leases still held after the exit: %v", held)
			}
		})
	}
}

// goneSecret stores a kubeconfig Secret for a cluster nobody serves.
func goneSecret(t *testing.T, mgmt kubernetes.Interface, name string, port int) {
	t.Helper()
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: none}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, port)
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-kubeconfig", Namespace: "regatta-system"},
		Data:       map[string][]byte{"value": []byte(kc)},
	}
	if _, err := mgmt.CoreV1().Secrets("regatta-system").Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// heldLeases lists the Leases of the default namespace that have a holder.
func heldLeases(t *testing.T, mgmt kubernetes.Interface) []string {
	t.Helper()
	ls, err := mgmt.CoordinationV1().Leases("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ls.Items {
		if h := l.Spec.HolderIdentity; h != nil && *h != "" {
			out = append(out, l.Name+"="+*h)
		}
	}
	return out
}
