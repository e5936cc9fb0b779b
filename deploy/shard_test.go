package deploy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestShardReplicasHoldTheirLeases runs the chart's sharded StatefulSet
// as three `regatta run` processes (the test binary re-executed), with
// the container's arguments and environment as the chart renders them,
// as its service account (a token of the chart's ServiceAccount, so only
// the chart's RBAC), against a real management API server. Each replica
// holds its membership Lease, and the fleet's one cluster (the
// management cluster itself, its kubeconfig Secret in the release
// namespace) gets its ConfigMap.
//
// Pods are not started: that needs clusters with controllers and nodes.
func TestShardReplicasHoldTheirLeases(t *testing.T) {
	const ns = "shard-leases"
	cluster := env.Cluster("chart")
	cs := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	bare := fleetRepo(t, ns)
	objs, err := loadChart(t).Render(context.Background(), ns, values(map[string]any{
		"fleet.repository.url":            bare,
		"replicasMode":                    "shard",
		"replicas":                        3,
		"shard.leaseDuration":             "3s",
		"rbac.kubeconfigSecretNamespaces": []any{ns},
	}))
	if err != nil {
		t.Fatal(err)
	}
	applyAll(t, cluster, append([]*unstructured.Unstructured{restrictedNamespace(ns)}, objs...))
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "self-kubeconfig", Namespace: ns},
		Data:       map[string][]byte{"value": cluster.Kubeconfig()},
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kc := serviceAccountKubeconfig(t, cluster, cs, ns, "regatta")
	sts := find(objs, "StatefulSet", "regatta")
	for i := range 3 {
		startReplica(t, sts, fmt.Sprintf("regatta-%d", i), kc)
	}
	testenv.WaitFor(t, 60*time.Second, "three Leases held", func() bool {
		for i := range 3 {
			id := fmt.Sprintf("regatta-%d", i)
			l, err := cs.CoordinationV1().Leases(ns).Get(t.Context(), "regatta-"+id, metav1.GetOptions{})
			if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != id {
				return false
			}
		}
		return true
	})
	testenv.WaitFor(t, 60*time.Second, "the fleet's ConfigMap applied", func() bool {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), "chart-probe", metav1.GetOptions{})
		return err == nil
	})
}

// fleetRepo is a bare fleet repository with one cluster, self, whose
// kubeconfig Secret is in ns, and one profile putting a ConfigMap there.
func fleetRepo(t *testing.T, ns string) string {
	t.Helper()
	work, bare := t.TempDir(), filepath.Join(t.TempDir(), "fleet.git")
	files := map[string]string{
		"clusters/self/cluster.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: self\n" +
			"  labels: {env: test}\nspec:\n  kubeconfig:\n    secretRef: {namespace: " + ns + "}\n",
		"profiles/probe.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: probe}\nspec:\n" +
			"  clusterSelector: {matchLabels: {env: test}}\n  addons:\n  - name: probe\n    manifests: {path: probe}\n",
		"probe/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chart-probe, namespace: " + ns + "}\ndata: {a: b}\n",
	}
	for name, content := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "--bare", "-b", "main", bare},
		{"-C", work, "init", "-q", "-b", "main"},
		{"-C", work, "add", "-A"},
		{"-C", work, "commit", "-q", "-m", "fleet"},
		{"-C", work, "push", "-q", bare, "HEAD:main"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "HOME="+work, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.com",
			"GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return bare
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the
// service account sa of ns with a token the API server issued.
func serviceAccountKubeconfig(t *testing.T, cluster *testenv.Cluster, cs kubernetes.Interface, ns, sa string) string {
	t.Helper()
	exp := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(cluster.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.Token, ai.ClientCertificateData, ai.ClientKeyData = tr.Status.Token, nil, nil
	}
	path := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// startReplica runs one pod of the StatefulSet as a process: the
// container's arguments with the pod's paths moved into a temporary
// folder, in-cluster replaced by kubeconfig, and the container's
// environment with the downward API's values for pod name.
func startReplica(t *testing.T, sts *unstructured.Unstructured, pod, kubeconfig string) {
	t.Helper()
	c := container(t, sts)
	dir := t.TempDir()
	args, _, _ := unstructured.NestedStringSlice(c, "args")
	for i, a := range args {
		switch {
		case a == "--management-kubeconfig=in-cluster":
			a = "--management-kubeconfig=" + kubeconfig
		case strings.HasPrefix(a, "--metrics-addr="):
			a = fmt.Sprintf("--metrics-addr=127.0.0.1:%d", freePort(t))
		}
		args[i] = strings.ReplaceAll(a, "=/var/cache/regatta", "="+dir)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), execAsRegatta+"=1")
	envs, _, _ := unstructured.NestedSlice(c, "env")
	for _, e := range envs {
		cmd.Env = append(cmd.Env, envVar(t, e.(map[string]any), sts.GetNamespace(), pod))
	}
	log, err := os.Create(filepath.Join(dir, "regatta.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		log.Close()
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("%s's log:\n%s", pod, out)
		}
	})
}

// envVar resolves one container env entry as the kubelet would for pod.
func envVar(t *testing.T, e map[string]any, ns, pod string) string {
	t.Helper()
	name := e["name"].(string)
	if v, ok := e["value"].(string); ok {
		return name + "=" + v
	}
	path, _, _ := unstructured.NestedString(e, "valueFrom", "fieldRef", "fieldPath")
	switch path {
	case "metadata.name":
		return name + "=" + pod
	case "metadata.namespace":
		return name + "=" + ns
	}
	t.Fatalf("env %s: %v is not resolved by this test", name, e)
	return ""
}

// freePort returns a loopback port below the ephemeral range.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
