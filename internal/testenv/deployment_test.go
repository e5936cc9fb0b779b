package testenv

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func availableDeployment(gen, observed int64, replicas, updated, available int32, cond corev1.ConditionStatus) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: gen}, Spec: appsv1.DeploymentSpec{Replicas: &replicas}}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: observed, UpdatedReplicas: updated, AvailableReplicas: available}
	if cond != "" {
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: cond}}
	}
	return d
}

func TestDeploymentAvailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    *appsv1.Deployment
		want bool
	}{
		{"rolled out", availableDeployment(2, 2, 3, 3, 3, corev1.ConditionTrue), true},
		{"generation not observed", availableDeployment(3, 2, 3, 3, 3, corev1.ConditionTrue), false},
		{"replicas not updated", availableDeployment(2, 2, 3, 2, 3, corev1.ConditionTrue), false},
		{"replicas not available", availableDeployment(2, 2, 3, 3, 2, corev1.ConditionTrue), false},
		{"condition False", availableDeployment(2, 2, 3, 3, 3, corev1.ConditionFalse), false},
		{"no condition yet", availableDeployment(1, 1, 3, 3, 3, ""), false},
		{"fresh object", availableDeployment(1, 0, 3, 0, 0, ""), false},
	} {
		if got := DeploymentAvailable(tc.d); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
