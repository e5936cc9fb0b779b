package app

import (
	"context"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regatta-dev/regatta/reconciler/kubeconfig"
)

// managementConfig reads the management cluster's REST config: a
// kubeconfig file, or the pod's service account for "in-cluster".
func managementConfig(path string) (*rest.Config, error) {
	switch path {
	case "":
		return nil, nil
	case "in-cluster":
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, usageError("--management-kubeconfig=in-cluster: %v", err)
		}
		return cfg, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError("--management-kubeconfig: %v", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(b)
	if err != nil {
		return nil, usageError("--management-kubeconfig %s: %v", path, err)
	}
	return cfg, nil
}

// managementSecrets reads kubeconfig Secrets from the management cluster.
func managementSecrets(cfg *rest.Config) (kubeconfig.SecretGetter, error) {
	if cfg == nil {
		return nil, nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
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
