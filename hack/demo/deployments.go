package main

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// markDeploymentsAvailable stands in for the nodes and controllers the demo
// clusters do not have: every second it reports each Deployment's replicas
// as updated, ready and available, so health checks see what a real
// cluster would report once the pods run.
func markDeploymentsAvailable(ctx context.Context, env *testenv.Env) {
	clients := map[string]*kubernetes.Clientset{}
	for _, c := range env.Clusters() {
		if cs, err := kubernetes.NewForConfig(c.RESTConfig()); err == nil {
			clients[c.Name()] = cs
		}
	}
	for {
		for _, cs := range clients {
			markAll(ctx, cs)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func markAll(ctx context.Context, cs *kubernetes.Clientset) {
	list, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range list.Items {
		d := &list.Items[i]
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		if d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == replicas {
			continue
		}
		now := metav1.Now()
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: replicas,
			UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: "True", Reason: "MinimumReplicasAvailable", LastUpdateTime: now, LastTransitionTime: now},
				{Type: appsv1.DeploymentProgressing, Status: "True", Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now},
			}}
		cs.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	}
}
