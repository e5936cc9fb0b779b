package testenv

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeploymentAvailable reports whether a Deployment has rolled out its
// current generation on a controller-backed cluster: the deployment
// controller observed it, every replica is updated and available, and the
// Available condition is True. The demo and the benchmark judge by it.
func DeploymentAvailable(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != want || st.AvailableReplicas != want {
		return false
	}
	for _, c := range st.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// DeploymentWithStatus returns a Deployment of generation gen and replicas
// with the status a deployment controller could have written (no
// Available condition when cond is empty): for the tests of
// DeploymentAvailable and of what judges by it.
func DeploymentWithStatus(gen, observed int64, replicas, updated, available int32, cond corev1.ConditionStatus) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: gen}, Spec: appsv1.DeploymentSpec{Replicas: &replicas}}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: observed, UpdatedReplicas: updated, AvailableReplicas: available}
	if cond != "" {
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: cond}}
	}
	return d
}
