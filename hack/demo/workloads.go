package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// The workload the demo follows: the apps profile's podinfo Deployment.
const (
	appNamespace = "apps"
	appName      = "podinfo"
)

// writeKubeconfigs writes each cluster's admin kubeconfig to
// work/kubeconfig/<cluster>.yaml, for the user's kubectl.
func writeKubeconfigs(work string, env *testenv.Env) (string, error) {
	dir := filepath.Join(work, "kubeconfig")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for _, c := range env.Clusters() {
		if err := os.WriteFile(filepath.Join(dir, c.Name()+".yaml"), c.Kubeconfig(), 0o600); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// showWorkloads waits until podinfo is Available on every cluster (staging
// first, then production after the rollout's soak) and prints, per
// cluster, its ReplicaSet and where the Pods run: the controllers' work,
// not the demo's.
func showWorkloads(ctx context.Context, env *testenv.Env) {
	say("\nwaiting for podinfo to be Available everywhere (staging first; production follows after a 30 s soak)...")
	for _, c := range env.Clusters() {
		cs, err := kubernetes.NewForConfig(c.RESTConfig())
		if err != nil {
			say("  %s: %v", c.Name(), err)
			continue
		}
		line, err := waitAvailable(ctx, cs, 4*time.Minute)
		if err != nil {
			say("  %-16s %v", c.Name(), err)
			continue
		}
		say("  %-16s %s", c.Name(), line)
	}
}

// waitAvailable polls podinfo until it is Available at its current
// generation and describes it.
func waitAvailable(ctx context.Context, cs kubernetes.Interface, within time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		d, err := cs.AppsV1().Deployments(appNamespace).Get(ctx, appName, metav1.GetOptions{})
		if err == nil && testenv.DeploymentAvailable(d) {
			return describe(ctx, cs, d), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("podinfo not Available after %s (see regatta's log and `regatta status`)", within)
		case <-time.After(time.Second):
		}
	}
}

// describe says which ReplicaSet holds the Deployment's Pods and on which
// nodes they run.
func describe(ctx context.Context, cs kubernetes.Interface, d *appsv1.Deployment) string {
	sel := metav1.FormatLabelSelector(d.Spec.Selector)
	pods, err := cs.CoreV1().Pods(appNamespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return err.Error()
	}
	owners, nodes := map[string]bool{}, map[string]bool{}
	ready := 0
	for _, p := range pods.Items {
		for _, o := range p.OwnerReferences {
			owners[o.Kind+" "+o.Name] = true
		}
		nodes[p.Spec.NodeName] = true
		if podReady(&p) {
			ready++
		}
	}
	return fmt.Sprintf("Deployment %s/%s Available: %s, %d/%d Pods Ready on %s",
		appNamespace, appName, strings.Join(keys(owners), ", "), ready, len(pods.Items), strings.Join(keys(nodes), ", "))
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
