package controllerse2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// TestPruneTakesReplicaSetsAndPods: a Deployment removed from a profile is
// deleted with propagation Background, so the garbage collector deletes
// its ReplicaSets and their Pods; the Deployment that stays keeps its own.
func TestPruneTakesReplicaSetsAndPods(t *testing.T) {
	const ns = "pruning"
	files := map[string]string{
		"profiles/pruning.yaml": profile("pruning", "stage: prod", "pruning", ""),
		"pruning/ns.yaml":       namespace(ns),
		"pruning/keep.yaml":     deployment(ns, "keep", "nginx:1.27", 2, ""),
		"pruning/gone.yaml":     deployment(ns, "gone", "nginx:1.27", 2, ""),
	}
	f := newFleet(t, files, prod)
	startDaemon(t, f, daemonOptions{})
	f.waitPair(t, 60*time.Second, prod, "pruning", status.StateApplied)
	waitAvailable(t, prod, ns, "gone", 2)
	waitAvailable(t, prod, ns, "keep", 2)

	f.Commit("drop the gone Deployment", map[string]string{"pruning/gone.yaml": ""})
	waitChildrenGone(t, prod, ns, "app=gone")
	if _, err := clientset(t, prod).AppsV1().Deployments(ns).Get(t.Context(), "gone", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment gone: %v, want NotFound", err)
	}
	waitAvailable(t, prod, ns, "keep", 2)
	if n := len(children(t, prod, ns, "app=keep")); n != 3 {
		t.Errorf("the kept Deployment has %d ReplicaSets and Pods, want 1 + 2", n)
	}
}

// TestWithdrawnNamespaceEmptiedByTheNamespaceController: a profile that
// stops selecting a cluster is withdrawn: its Deployment and Namespace are
// deleted, the namespace controller empties the Namespace (Pods go through
// kwok), and meanwhile the pair never reports an error.
func TestWithdrawnNamespaceEmptiedByTheNamespaceController(t *testing.T) {
	const ns = "team"
	files := map[string]string{
		"profiles/team.yaml": profile("team", "stage: prod", "team", ""),
		"team/ns.yaml":       namespace(ns),
		"team/deploy.yaml":   deployment(ns, "app", "nginx:1.27", 2, ""),
		"team/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: team}\ndata: {a: b}\n",
	}
	f := newFleet(t, files, prod)
	startDaemon(t, f, daemonOptions{})
	f.waitPair(t, 60*time.Second, prod, "team", status.StateApplied)
	waitAvailable(t, prod, ns, "app", 2)

	f.Commit("team leaves prod", map[string]string{"profiles/team.yaml": profile("team", "stage: nowhere", "team", "")})
	cs := clientset(t, prod)
	seen := map[string]bool{}
	testenv.Eventually(t, 90*time.Second, func(ctx context.Context) error {
		p := f.pair(t, prod, "team")
		seen[p.State] = true
		if p.State == status.StateFailed || p.Error != nil {
			t.Fatalf("team reported an error while its namespace terminates: %s %q %+v", p.State, p.Message, p.Error)
		}
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s still there (%v); team is %s", ns, err, p.State)
		}
		return nil
	})
	t.Logf("states of team while withdrawn: %v", seen)
	testenv.Eventually(t, 30*time.Second, func(context.Context) error {
		if p := f.pair(t, prod, "team"); p.State != "" && p.State != status.StateWithdrawn {
			return fmt.Errorf("team is %s %q after its namespace is gone", p.State, p.Message)
		}
		return nil
	})
}

// children lists the ReplicaSets and Pods that match selector.
func children(t *testing.T, cluster, ns, selector string) []string {
	t.Helper()
	out, err := listChildren(t.Context(), t, cluster, ns, selector)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func listChildren(ctx context.Context, t *testing.T, cluster, ns, selector string) ([]string, error) {
	cs := clientset(t, cluster)
	opts := metav1.ListOptions{LabelSelector: selector}
	rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rs.Items {
		out = append(out, "ReplicaSet/"+r.Name)
	}
	for _, p := range pods.Items {
		out = append(out, "Pod/"+p.Name)
	}
	return out, nil
}

func waitChildrenGone(t *testing.T, cluster, ns, selector string) {
	t.Helper()
	testenv.Eventually(t, 90*time.Second, func(ctx context.Context) error {
		left, err := listChildren(ctx, t, cluster, ns, selector)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("left on %s: %v", cluster, left)
		}
		return nil
	})
}
