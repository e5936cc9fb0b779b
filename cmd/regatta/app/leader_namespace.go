package app

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// leaseNamespace makes sure the namespace of the leader election Lease
// exists in the cluster holding it (where: "the management cluster", "the
// agent's cluster"): without it the election retries for ever, logging
// `namespaces "..." not found`. A missing namespace is created; one that
// cannot be created fails the start in one line naming it and the fix.
// When Namespaces cannot be read, one line says what to look for, and the
// election goes on (the namespace may well exist).
func leaseNamespace(ctx context.Context, cs kubernetes.Interface, ns, where string, log *slog.Logger) error {
	_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		log.Warn("cannot check that the leader election Lease's namespace exists; if the election keeps failing with `namespaces \""+ns+"\" not found`, create it or set --leader-elect-namespace",
			"namespace", ns, "cluster", where, "error", err)
		return nil
	}
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("leader election: namespace %q of the Lease regatta-leader does not exist in %s and cannot be created (%v): create it (kubectl create namespace %s) or set --leader-elect-namespace",
			ns, where, err, ns)
	}
	log.Info("created the namespace of the leader election Lease", "namespace", ns, "cluster", where)
	return nil
}

// leaseCluster names the cluster holding the leader election Lease.
func (f *runFlags) leaseCluster() string {
	if f.agent.config != nil {
		return "the agent's cluster"
	}
	return "the management cluster"
}
