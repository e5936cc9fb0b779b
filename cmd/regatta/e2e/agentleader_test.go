package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestAgentLeaderElection runs two agents of one pulled cluster, as the
// chart does, with leader election on that cluster's own API server; each
// reaches it as its own ServiceAccount, so its audit log tells them apart.
// One acts and the other stands by, writing nothing but its attempts at
// the Lease; the leader is killed (SIGKILL: its Lease is not released),
// the other takes the Lease over, sends no write to the objects already
// applied, and applies the next commit.
func TestAgentLeaderElection(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{AuditLog: true, Clusters: []testenv.ClusterOptions{{Name: "edge"}}})
	c := env.Cluster("edge")
	admin, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logDir := logDirOr(dir)
	r := newRepo(t)
	objects := func(version string) map[string]string {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: le-e2e}\n")
		for i := range 20 {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: le-e2e}\ndata: {version: %s}\n", i, version)
		}
		return map[string]string{
			"clusters/edge/cluster.yaml": clusterYAML("edge", "pull", "env: prod"),
			"profiles/app.yaml":          "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: app}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: app\n    manifests: {path: app}\n",
			"app/objects.yaml":           b.String(),
		}
	}
	r.commit(t, "v1", objects("v1"))
	procs := map[string]*process{}
	for _, id := range []string{"agent-a", "agent-b"} {
		kc := serviceAccountKubeconfig(t, admin, c, id, filepath.Join(dir, id+".kubeconfig"))
		procs[id] = startRegatta(t, id, logDir, "--cluster", "edge", "--kubeconfig", kc, "--repo", r.bare,
			"--interval", "500ms", "--status-interval", "1s", "--leader-elect-namespace", "default")
	}
	at := func(version string) bool { return configMapVersion(t, admin, "le-e2e", "cm-19") == version }
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		l, err := admin.CoordinationV1().Leases("default").Get(context.Background(), "regatta-leader", metav1.GetOptions{})
		t.Logf("Lease: %+v (%v)", l.Spec, err)
		for id, p := range procs {
			select {
			case <-p.done:
				t.Logf("%s (pid %d) exited: %v", id, p.cmd.Process.Pid, p.cmd.ProcessState)
			default:
				t.Logf("%s (pid %d) runs", id, p.cmd.Process.Pid)
			}
		}
	})
	testenv.WaitFor(t, 60*time.Second, "v1 applied by the leader", func() bool { return at("v1") })
	leader, standby := leaderOf(t, admin, procs), ""
	for id := range procs {
		if id != leader {
			standby = id
		}
	}
	v2 := r.commit(t, "v2", objects("v2"))
	applied := func() bool {
		out, _ := gitOut(r.bare, "show", "regatta-status/edge:status/clusters/edge.yaml")
		return strings.Contains(out, "state: Applied") && strings.Contains(out, "sourceRevision: "+v2)
	}
	testenv.WaitFor(t, 60*time.Second, "v2 applied and healthy, the leader's record says", applied)
	if w := agentWrites(t, c, standby, time.Time{}); len(w) > 0 {
		t.Errorf("the standby %s wrote while %s led: %v", standby, leader, w)
	}
	if w := agentWrites(t, c, leader, time.Time{}); len(w) == 0 {
		t.Errorf("the leader %s wrote nothing", leader)
	}

	killed := time.Now()
	procs[leader].kill(syscall.SIGKILL)
	testenv.WaitFor(t, 60*time.Second, "the standby holds the Lease", func() bool { return leaderOf(t, admin, procs) == standby })
	testenv.WaitFor(t, 60*time.Second, "the new leader reconciled the cluster", func() bool {
		n, err := procs[standby].counter("regatta_cluster_reconciles_total") // by result: its one cluster
		return err == nil && n[""] > 0
	})
	if w := agentWrites(t, c, standby, killed); len(w) > 0 {
		t.Errorf("taking over, %s re-applied objects already applied: %v", standby, w)
	}
	if got, err := procs[standby].applies(); err != nil || got["edge"] != 0 {
		t.Errorf("taking over, %s applied %v (err %v), want nothing", standby, got, err)
	}
	r.commit(t, "v3", objects("v3"))
	testenv.WaitFor(t, 60*time.Second, "v3 applied by the new leader", func() bool { return at("v3") })
	if w := agentWrites(t, c, standby, killed); len(w) == 0 {
		t.Errorf("the new leader %s did not write v3", standby)
	}
}

// serviceAccountKubeconfig creates a ServiceAccount bound to cluster-admin
// and writes a kubeconfig with a token of it.
func serviceAccountKubeconfig(t *testing.T, admin kubernetes.Interface, c *testenv.Cluster, name, path string) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "default"}},
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hour := int64(3600)
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(c.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range cfg.AuthInfos {
		u.Token = tr.Status.Token
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// leaderOf returns the process whose pid holds the agents' Lease.
func leaderOf(t *testing.T, admin kubernetes.Interface, procs map[string]*process) string {
	t.Helper()
	l, err := admin.CoordinationV1().Leases("default").Get(context.Background(), "regatta-leader", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	for id, p := range procs {
		if strings.HasSuffix(*l.Spec.HolderIdentity, "-"+strconv.Itoa(p.cmd.Process.Pid)) {
			return id
		}
	}
	return ""
}

// agentWrites lists the writes of one agent's ServiceAccount received
// since from, to anything but Leases.
func agentWrites(t *testing.T, c *testenv.Cluster, id string, from time.Time) []string {
	t.Helper()
	events, err := testenv.ReadAuditLog(c.AuditLog())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range events {
		if e.User.Username != "system:serviceaccount:default:"+id || !isWrite(e) || e.ObjectRef.Resource == "leases" || e.RequestReceivedTimestamp.Before(from) {
			continue
		}
		out = append(out, e.Verb+" "+e.ObjectRef.Resource+"/"+e.ObjectRef.Namespace+"/"+e.ObjectRef.Name)
	}
	return out
}
