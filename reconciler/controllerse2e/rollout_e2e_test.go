package controllerse2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/status"
)

const rollingWeb = `  healthTimeout: 10s
  rollout:
    stages:
    - name: canary
      clusterSelector: {matchLabels: {stage: canary}}
      soak: 1s
    - name: production
      clusterSelector: {matchLabels: {stage: prod}}
`

// TestRolloutHaltsOnCrashLoopingCanary: a commit that gives the web
// Deployment an image whose containers crash reaches the canary only; its
// new ReplicaSet's Pods crash-loop, the Deployment never finishes its
// rollout, the canary fails its health timeout and the rollout halts; the
// production cluster's Deployment is never written. A revert commit brings
// the canary back and the rollout is no longer halted.
func TestRolloutHaltsOnCrashLoopingCanary(t *testing.T) {
	const ns = "rolling"
	web := func(image string) map[string]string {
		return map[string]string{"web/deploy.yaml": namespace(ns) + "---\n" + deployment(ns, "web", image, 2, "")}
	}
	files := web("nginx:1.27")
	files["profiles/web.yaml"] = profile("web", "env: prod", "web", rollingWeb)
	f := newFleet(t, files, canary, prod)
	d := startDaemon(t, f, daemonOptions{})
	for _, c := range []string{canary, prod} {
		f.waitPair(t, 90*time.Second, c, "web", status.StateApplied)
		waitAvailable(t, c, ns, "web", 2)
	}
	prodGen := generation(t, prod, ns, "web")

	f.Commit("web: crashing image", web("registry.test/crash:v2"))
	waitCrashLooping(t, canary, ns)
	failed := f.waitPair(t, 60*time.Second, canary, "web", status.StateFailed)
	t.Logf("canary: %s %q", failed.State, failed.Message)
	testenv.Eventually(t, 10*time.Second, func(context.Context) error {
		if h := halted(d, "web"); h != 1 {
			return fmt.Errorf("regatta_rollout_halted{profile=web} = %v, want 1", h)
		}
		return nil
	})
	testenv.Consistently(t, 3*time.Second, func(context.Context) error {
		if g := generation(t, prod, ns, "web"); g != prodGen {
			return fmt.Errorf("prod-1's Deployment went from generation %d to %d during the halt", prodGen, g)
		}
		return nil
	})

	f.Commit("revert web to nginx:1.27", web("nginx:1.27"))
	f.waitPair(t, 60*time.Second, canary, "web", status.StateApplied)
	waitAvailable(t, canary, ns, "web", 2)
	testenv.Eventually(t, 10*time.Second, func(context.Context) error {
		if h := halted(d, "web"); h != 0 {
			return fmt.Errorf("regatta_rollout_halted{profile=web} = %v after the revert, want 0", h)
		}
		return nil
	})
	if g := generation(t, prod, ns, "web"); g != prodGen {
		t.Errorf("prod-1's Deployment went from generation %d to %d; the revert renders what it holds", prodGen, g)
	}
}

func halted(d *reconciler.Daemon, profile string) float64 {
	return testutil.ToFloat64(d.Metrics().Rollout.Halted.WithLabelValues(profile))
}

func generation(t *testing.T, cluster, ns, name string) int64 {
	t.Helper()
	d, err := clientset(t, cluster).AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Generation
}

// waitCrashLooping waits until a Pod of the namespace crash-loops as the
// kubelet reports it: restarted, waiting in CrashLoopBackOff.
func waitCrashLooping(t *testing.T, cluster, ns string) {
	t.Helper()
	cs := clientset(t, cluster)
	testenv.Eventually(t, 60*time.Second, func(ctx context.Context) error {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.ContainerStatuses {
				if c.RestartCount > 0 && c.State.Waiting != nil && c.State.Waiting.Reason == "CrashLoopBackOff" {
					return nil
				}
			}
		}
		return fmt.Errorf("no pod of %s on %s crash-loops yet", ns, cluster)
	})
}
