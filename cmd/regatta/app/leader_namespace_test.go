package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestAgentCreatesItsLeaseNamespace runs an agent (`regatta run --cluster
// edge-1 --kubeconfig ...`) on a real API server without the
// regatta-system Namespace: it creates the Namespace, says so, and wins
// its leader Lease instead of waiting for ever. A replica that may read
// Namespaces but not create them fails at once, in one line naming the
// namespace and the fix.
func TestAgentCreatesItsLeaseNamespace(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "edge-1"}}})
	c := env.Cluster("edge-1")
	admin := kubernetes.NewForConfigOrDie(c.RESTConfig())
	bg := context.Background()
	if _, err := admin.CoreV1().Namespaces().Get(bg, "regatta-system", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("regatta-system before the agent started: %v, want not found", err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/edge-1/cluster.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: edge-1}\nspec: {mode: pull}\n",
	})
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "fleet")
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, c.Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	t.Cleanup(cancel)
	var stderr testenv.LogBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"run", "--cluster", "edge-1", "--kubeconfig", kc, "--repo", dir, "--metrics-addr", ""}, io.Discard, &stderr)
	}()
	testenv.WaitFor(t, 30*time.Second, "the agent leading", func() bool { return strings.Contains(stderr.String(), "leader election won") })
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("the agent exited %d:\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not stop")
	}
	if _, err := admin.CoreV1().Namespaces().Get(bg, "regatta-system", metav1.GetOptions{}); err != nil {
		t.Errorf("regatta-system after the agent started: %v", err)
	}
	if !strings.Contains(stderr.String(), `msg="created the namespace of the leader election Lease" namespace=regatta-system cluster="the agent's cluster"`) {
		t.Errorf("the agent did not say it created the namespace:\n%s", stderr.String())
	}

	// A replica whose credentials read Namespaces but may not create one.
	kcb, err := c.NamespaceUser(bg, "reader", []string{"reader-home"}, "")
	if err != nil {
		t.Fatal(err)
	}
	grantNamespaceReader(t, admin, "reader", "reader-home")
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kcb)
	if err != nil {
		t.Fatal(err)
	}
	f := &runFlags{leaderElect: true, leaderElectNamespace: "regatta-missing", leaderIdentity: "a"}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	lctx, lcancel := context.WithTimeout(bg, 30*time.Second)
	defer lcancel()
	err = f.lead(lctx, cfg, log, func() {}, func(context.Context) error {
		t.Error("led without the Lease's namespace")
		return nil
	})
	if err == nil || lctx.Err() != nil || !strings.Contains(err.Error(),
		`namespace "regatta-missing" of the Lease regatta-leader does not exist in the management cluster and cannot be created`) ||
		!strings.Contains(err.Error(), "create it (kubectl create namespace regatta-missing) or set --leader-elect-namespace") {
		t.Errorf("lead without a namespace it may create: %v", err)
	}
}

// grantNamespaceReader lets the ServiceAccount home/name read Namespaces.
func grantNamespaceReader(t *testing.T, cs kubernetes.Interface, name, home string) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name + "-namespaces"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list"}}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-namespaces"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: home, Name: name}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
