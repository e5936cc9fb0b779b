package main

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// showEvent plays the first event-driven example of the fleet: it creates
// a Service exposing 443 in namespace eng of staging-1 itself, says so,
// and reports when the https-netpol profile's NetworkPolicy appears.
func showEvent(ctx context.Context, env *testenv.Env) {
	c := env.Cluster("staging-1")
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		say("event demo: %v", err)
		return
	}
	say("\nevent-driven add-ons: the demo creates Service eng/web exposing 443 on staging-1 (as a user would)...")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "eng"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		say("event demo: %v", err)
		return
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "eng"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "https", Port: 443}}},
	}
	start := time.Now()
	if _, err := cs.CoreV1().Services("eng").Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		say("event demo: %v", err)
		return
	}
	for ctx.Err() == nil && time.Since(start) < 30*time.Second {
		l, err := cs.NetworkingV1().NetworkPolicies("eng").List(ctx, metav1.ListOptions{LabelSelector: "service=web"})
		if err == nil && len(l.Items) > 0 {
			say("  profile https-netpol applied NetworkPolicy eng/%s %s after the Service was created", l.Items[0].Name, time.Since(start).Round(time.Millisecond))
			say("  (delete it with: kubectl -n eng delete service web — the policy goes with it)")
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	say("  no NetworkPolicy for eng/web after 30s; see regatta's log")
}
