package controllerse2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// TestDriftAgainstControllers: with drift detection on, what the API
// server and the controllers default or own is neither fought nor reported
// as drift: the Service's clusterIP, the Deployment's rollingUpdate
// defaults, its replicas (the manifest leaves them out) after someone
// scales it, and the status the controllers keep writing. A field the
// manifest sets (the image), edited by someone, is restored, and the
// restore keeps the replicas someone chose.
func TestDriftAgainstControllers(t *testing.T) {
	const ns = "drift"
	files := map[string]string{
		"profiles/api.yaml": profile("api", "stage: canary", "api", "  syncMode: ContinuousWithDriftDetection\n"),
		"api/ns.yaml":       namespace(ns),
		"api/service.yaml":  "apiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: drift}\nspec:\n  selector: {app: api}\n  ports: [{port: 80}]\n",
		"api/deploy.yaml":   deployment(ns, "api", "nginx:1.27", 0, "  strategy: {type: RollingUpdate}\n"),
	}
	f := newFleet(t, files, canary)
	d := startDaemon(t, f, daemonOptions{})
	f.waitPair(t, 60*time.Second, canary, "api", status.StateApplied)
	waitAvailable(t, canary, ns, "api", 1)
	cs := clientset(t, canary)
	svc, err := cs.CoreV1().Services(ns).Get(t.Context(), "api", metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP == "" {
		t.Fatalf("Service api: %v, clusterIP %q", err, svc.Spec.ClusterIP)
	}

	scale := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 3},
	}
	if _, err := cs.AppsV1().Deployments(ns).UpdateScale(t.Context(), "api", scale, metav1.UpdateOptions{FieldManager: "kubectl-scale"}); err != nil {
		t.Fatal(err)
	}
	waitAvailable(t, canary, ns, "api", 3)
	testenv.Consistently(t, 5*time.Second, func(ctx context.Context) error {
		dep, err := cs.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if *dep.Spec.Replicas != 3 {
			return fmt.Errorf("replicas %d, want the 3 someone scaled to", *dep.Spec.Replicas)
		}
		s, err := cs.CoreV1().Services(ns).Get(ctx, "api", metav1.GetOptions{})
		if err != nil || s.Spec.ClusterIP != svc.Spec.ClusterIP {
			return fmt.Errorf("Service clusterIP %q, was %q (%v)", s.Spec.ClusterIP, svc.Spec.ClusterIP, err)
		}
		if n := driftCorrections(d, canary, "api"); n != 0 {
			return fmt.Errorf("%v drift corrections of defaulted or controller-owned fields", n)
		}
		return nil
	})

	edit := []byte(`[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.28"}]`)
	if _, err := cs.AppsV1().Deployments(ns).Patch(t.Context(), "api", types.JSONPatchType, edit, metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		dep, err := cs.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if img := dep.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
			return fmt.Errorf("image %s, want the manifest's nginx:1.27 restored", img)
		}
		return nil
	})
	waitAvailable(t, canary, ns, "api", 3)
	if n := driftCorrections(d, canary, "api"); n < 1 {
		t.Errorf("%v drift corrections after the image was edited, want at least 1", n)
	}
}

func driftCorrections(d *reconciler.Daemon, cluster, profile string) float64 {
	return testutil.ToFloat64(d.Metrics().DriftCorrections.WithLabelValues(cluster, profile))
}
