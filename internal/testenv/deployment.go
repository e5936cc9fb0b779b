package testenv

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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
