package testenv

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestDeploymentAvailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    *appsv1.Deployment
		want bool
	}{
		{"rolled out", DeploymentWithStatus(2, 2, 3, 3, 3, corev1.ConditionTrue), true},
		{"generation not observed", DeploymentWithStatus(3, 2, 3, 3, 3, corev1.ConditionTrue), false},
		{"replicas not updated", DeploymentWithStatus(2, 2, 3, 2, 3, corev1.ConditionTrue), false},
		{"replicas not available", DeploymentWithStatus(2, 2, 3, 3, 2, corev1.ConditionTrue), false},
		{"condition False", DeploymentWithStatus(2, 2, 3, 3, 3, corev1.ConditionFalse), false},
		{"no condition yet", DeploymentWithStatus(1, 1, 3, 3, 3, ""), false},
		{"fresh object", DeploymentWithStatus(1, 0, 3, 0, 0, ""), false},
	} {
		if got := DeploymentAvailable(tc.d); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
