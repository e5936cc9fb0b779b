package kubeconfig

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Rate limits of the management cluster's client when its configuration
// sets none. Every cluster's kubeconfig Secret is read anew on each
// reconciliation (tokens rotate), so with client-go's default 5 QPS a
// fleet-wide change reached at most 5 clusters a second whatever
// --concurrency said: 1,000 clusters took over 3 minutes (make bench,
// fleet phase).
const (
	ManagementQPS   = 200
	ManagementBurst = 400
)

// ManagementSecrets reads kubeconfig Secrets from the management cluster
// at cfg (nil: no management cluster, nil getter).
func ManagementSecrets(cfg *rest.Config) (SecretGetter, error) {
	if cfg == nil {
		return nil, nil
	}
	cs, err := managementClient(cfg)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, namespace, name string) (map[string]any, error) {
		s, err := cs.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
		if err != nil {
			return nil, err
		}
		obj["kind"], obj["apiVersion"] = "Secret", "v1"
		return obj, nil
	}, nil
}

// managementClient is a client of cfg with ManagementQPS and
// ManagementBurst unless cfg sets its own limits; cfg is not changed.
func managementClient(cfg *rest.Config) (*kubernetes.Clientset, error) {
	c := rest.CopyConfig(cfg)
	if c.RateLimiter == nil && c.QPS == 0 {
		c.QPS, c.Burst = ManagementQPS, ManagementBurst
	}
	return kubernetes.NewForConfig(c)
}
