package app

import (
	"os"

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
	return kubeconfig.ManagementSecrets(cfg)
}
