package controllerse2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// TestDependsOnWaitsForAvailableDeployment: the second profile of a
// dependsOn chain is applied only once the first profile's Deployment is
// Available, which the Deployment and ReplicaSet controllers report when its
// Pods have been Ready on kwok nodes for minReadySeconds; meanwhile the
// status branch shows the dependent WaitingForDependency.
func TestDependsOnWaitsForAvailableDeployment(t *testing.T) {
	const ns = "chain"
	files := map[string]string{
		"profiles/backend.yaml":  profile("backend", "stage: canary", "backend", ""),
		"backend/ns.yaml":        namespace(ns),
		"backend/deploy.yaml":    deployment(ns, "backend", "nginx:1.27", 2, "  minReadySeconds: 6\n"),
		"profiles/frontend.yaml": profile("frontend", "stage: canary", "frontend", "  dependsOn: [backend]\n"),
		"frontend/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frontend, namespace: " + ns + "}\ndata: {backend: ready}\n",
	}
	f := newFleet(t, files, canary)
	startDaemon(t, f, daemonOptions{})
	cs := clientset(t, canary)

	waiting := f.waitPair(t, 30*time.Second, canary, "frontend", status.StateWaitingForDependency)
	t.Logf("frontend while backend rolls out: %s %q", waiting.State, waiting.Message)
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), "frontend", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("frontend applied while it waits for backend: %v", err)
	}
	f.waitPair(t, 60*time.Second, canary, "frontend", status.StateApplied)

	cm, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), "frontend", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := cs.AppsV1().Deployments(ns).Get(t.Context(), "backend", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	available := deploymentCondition(d, appsv1.DeploymentAvailable)
	if available == nil || available.Status != corev1.ConditionTrue || d.Status.AvailableReplicas != 2 {
		t.Fatalf("backend Deployment when frontend was applied: %+v", d.Status)
	}
	if cm.CreationTimestamp.Before(&available.LastTransitionTime) {
		t.Errorf("frontend created at %s, before backend became Available at %s",
			cm.CreationTimestamp, available.LastTransitionTime)
	}
	if p := f.pair(t, canary, "backend"); p.State != status.StateApplied {
		t.Errorf("backend: %s %q, want Applied", p.State, p.Message)
	}
}

func deploymentCondition(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == typ {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// waitAvailable waits until the Deployment's controllers report replicas
// updated and available.
func waitAvailable(t *testing.T, cluster, ns, name string, replicas int32) {
	t.Helper()
	cs := clientset(t, cluster)
	testenv.Eventually(t, 60*time.Second, func(ctx context.Context) error {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c := deploymentCondition(d, appsv1.DeploymentAvailable)
		if c == nil || c.Status != corev1.ConditionTrue || d.Status.AvailableReplicas != replicas ||
			d.Status.UpdatedReplicas != replicas || d.Status.ObservedGeneration != d.Generation {
			return fmt.Errorf("deployment %s/%s on %s not available with %d replicas: %+v", ns, name, cluster, replicas, d.Status)
		}
		return nil
	})
}
