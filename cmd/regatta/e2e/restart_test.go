package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestKilledMidApplyWritesNothingTwice: regatta is SIGKILLed while it
// applies a change of a drift-detected profile: it wrote the first
// add-on's ConfigMaps and waits for the second's Deployment (the test
// plays its controller), with nothing recorded in the cluster's inventory
// yet. A new process takes over. Every ConfigMap reaches the change, and
// none is written twice (the API server's audit log; both processes are
// "regatta" there, the second started after the first had died): the new
// process finds the ones the killed one wrote already as rendered (a dry
// run) and sends them no apply. Objects with a status (the Namespace, the
// Deployment) are applied at every pass by design and are not counted.
func TestKilledMidApplyWritesNothingTwice(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}, {Name: "c0"}}, AuditLog: true})
	mgmt, err := kubernetes.NewForConfig(env.Cluster("mgmt").RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	f := fleet{names: []string{"c0"}, clients: map[string]kubernetes.Interface{}}
	if f.clients["c0"], err = kubernetes.NewForConfig(env.Cluster("c0").RESTConfig()); err != nil {
		t.Fatal(err)
	}
	kubeconfigSecret(t, mgmt, env.Cluster("c0"))
	repo := newRepo(t)
	repo.commit(t, "fleet", driftFleetFiles("v1"))
	dir := t.TempDir()
	mgmtKC := mgmtKubeconfig(t, dir, env.Cluster("mgmt"))
	logDir := logDirOr(dir)
	args := []string{"--repo", repo.bare, "--management-kubeconfig", mgmtKC, "--leader-elect=false",
		"--interval", "500ms", "--status-interval", "1s", "--health-timeout", "30s", "--log-level", "info"}
	c0 := f.clients["c0"]
	first := startRegatta(t, "regatta-first", logDir, args...)
	testenv.WaitFor(t, 60*time.Second, "c0 at v1", func() bool { return gateReady(t, c0) && len(f.at(t, "v1")) == 1 })

	changed := time.Now()
	repo.commit(t, "v2", driftFleetFiles("v2"))
	testenv.WaitFor(t, 30*time.Second, "the first process waiting for the gate at v2", func() bool {
		return f.configMap(t, "c0", bulkName(bulk-1)) == "v2" && gateVersion(t, c0) == "v2"
	})
	first.kill(syscall.SIGKILL)
	second := time.Now() // the killed process's requests were received before
	startRegatta(t, "regatta-second", logDir, args...)
	testenv.WaitFor(t, 60*time.Second, "c0 at v2 after the kill", func() bool { return gateReady(t, c0) && len(f.at(t, "v2")) == 1 })
	for i := range bulk {
		if v := f.configMap(t, "c0", bulkName(i)); v != "v2" {
			t.Errorf("%s at %q after the takeover, want v2", bulkName(i), v)
		}
	}

	byFirst, bySecond := 0, 0
	for name, at := range configMapWrites(t, env.Cluster("c0"), changed) {
		if len(at) > 1 {
			t.Errorf("ConfigMap %s written %d times since the change, at %v (the next process started at %s)", name, len(at), at, second.Format(time.StampMicro))
		}
		if at[0].Before(second) {
			byFirst++
		} else {
			bySecond++
		}
	}
	if byFirst == 0 || bySecond == 0 {
		t.Errorf("the kill was not mid-apply: %d ConfigMaps written by the killed process, %d by the next", byFirst, bySecond)
	}
	t.Logf("ConfigMaps written since the change: %d by the killed process, %d by the next, none twice", byFirst, bySecond)
}

// driftFleetFiles is fleetFiles with the profile drift-detected (its
// passes skip the ConfigMaps they applied as they are) and a Deployment
// at version between the bulk add-on and the probe.
func driftFleetFiles(version string) map[string]string {
	files := fleetFiles(version)
	prof := strings.Replace(files["profiles/probe.yaml"], "  addons:", "  syncMode: ContinuousWithDriftDetection\n  addons:", 1)
	files["profiles/probe.yaml"] = strings.Replace(prof, "  - name: probe\n", "  - name: gate\n    manifests: {path: probe/gate}\n  - name: probe\n", 1)
	files["probe/gate/deployment.yaml"] = `apiVersion: apps/v1
kind: Deployment
metadata: {name: gate, namespace: shard-e2e}
spec:
  replicas: 1
  selector: {matchLabels: {app: gate}}
  template:
    metadata: {labels: {app: gate}, annotations: {version: ` + version + `}}
    spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}
`
	for k, v := range clusterFile("c0") {
		files[k] = v
	}
	return files
}

func bulkName(i int) string { return fmt.Sprintf("bulk-%d", i) }

// configMapWrites returns, by ConfigMap of the test's namespace, when the
// writes received since from were received, dry runs left out, oldest
// first.
func configMapWrites(t *testing.T, c *testenv.Cluster, from time.Time) map[string][]time.Time {
	t.Helper()
	events, err := testenv.ReadAuditLog(c.AuditLog())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]time.Time{}
	for _, e := range events {
		if e.RequestReceivedTimestamp.Before(from) || e.ObjectRef.Resource != "configmaps" ||
			e.ObjectRef.Namespace != "shard-e2e" || strings.Contains(e.RequestURI, "dryRun=") {
			continue
		}
		switch e.Verb {
		case "create", "update", "patch":
			out[e.ObjectRef.Name] = append(out[e.ObjectRef.Name], e.RequestReceivedTimestamp)
		}
	}
	return out
}

func gate(t *testing.T, c kubernetes.Interface) *appsv1.Deployment {
	t.Helper()
	d, err := c.AppsV1().Deployments("shard-e2e").Get(context.Background(), "gate", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// gateVersion is the version of the gate Deployment's template.
func gateVersion(t *testing.T, c kubernetes.Interface) string {
	if d := gate(t, c); d != nil {
		return d.Spec.Template.Annotations["version"]
	}
	return ""
}

// gateReady plays the deployment controller: it writes the gate's status
// as available at its generation, and reports whether it did.
func gateReady(t *testing.T, c kubernetes.Interface) bool {
	t.Helper()
	d := gate(t, c)
	if d == nil {
		return false
	}
	if d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == 1 {
		return true
	}
	now := metav1.Now()
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now},
		}}
	_, err := c.AppsV1().Deployments("shard-e2e").UpdateStatus(context.Background(), d, metav1.UpdateOptions{})
	return err == nil
}
