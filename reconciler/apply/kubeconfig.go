package apply

import (
	"encoding/base64"
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig Secret keys, as Cluster API writes them.
const (
	KubeconfigKey         = "value"
	KubeconfigFallbackKey = "value.yaml"
)

// KubeconfigFromSecret returns the kubeconfig held by a Secret object, given
// as an unstructured object's content or a decoded YAML map. key names the
// data key; empty means "value", then "value.yaml". stringData (plain text)
// wins over data (base64), as in the API server. Errors name the Secret and
// the key, never a value.
func KubeconfigFromSecret(secret map[string]any, key string) ([]byte, error) {
	u := &unstructured.Unstructured{Object: secret}
	name := fmt.Sprintf("Secret %s/%s", u.GetNamespace(), u.GetName())
	if u.GetKind() != "" && u.GetKind() != "Secret" {
		return nil, fmt.Errorf("%s: kind is %s, not Secret", name, u.GetKind())
	}
	keys := []string{key}
	if key == "" {
		keys = []string{KubeconfigKey, KubeconfigFallbackKey}
	}
	for _, k := range keys {
		data, found, err := secretValue(secret, k)
		if err != nil {
			return nil, fmt.Errorf("%s: key %s: %w", name, k, err)
		}
		if found {
			return data, nil
		}
	}
	return nil, fmt.Errorf("%s has no key %s in data or stringData", name, keys[0])
}

// secretValue reads one key from stringData, then data.
func secretValue(secret map[string]any, key string) ([]byte, bool, error) {
	if sd, ok := secret["stringData"].(map[string]any); ok {
		if v, ok := sd[key]; ok {
			s, ok := v.(string)
			if !ok {
				return nil, false, fmt.Errorf("stringData value is not a string")
			}
			return []byte(s), true, nil
		}
	}
	d, ok := secret["data"].(map[string]any)
	if !ok {
		return nil, false, nil
	}
	v, ok := d[key]
	if !ok {
		return nil, false, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, false, fmt.Errorf("data value is not a base64 string")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, false, fmt.Errorf("data value is not valid base64")
	}
	return b, true, nil
}

// checkKubeconfig refuses kubeconfigs that would run a program or read a
// file on the daemon's host: a kubeconfig in a repository must not.
func checkKubeconfig(cluster string, cfg *clientcmdapi.Config) error {
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return &KubeconfigError{Cluster: cluster, Reason: fmt.Sprintf("kubeconfig has no context %q (current-context)", cfg.CurrentContext)}
	}
	auth := cfg.AuthInfos[ctx.AuthInfo]
	if auth == nil {
		return nil
	}
	switch {
	case auth.Exec != nil:
		return execError(cluster, "an exec credential plugin ("+filepath.Base(auth.Exec.Command)+")")
	case auth.AuthProvider != nil:
		return execError(cluster, "an auth-provider ("+auth.AuthProvider.Name+")")
	case auth.TokenFile != "":
		return execError(cluster, "a token file on the daemon's host (tokenFile)")
	case auth.ClientCertificate != "" || auth.ClientKey != "":
		return execError(cluster, "client certificate files on the daemon's host")
	}
	if c := cfg.Clusters[ctx.Cluster]; c != nil && c.CertificateAuthority != "" {
		return execError(cluster, "a certificate-authority file on the daemon's host")
	}
	return nil
}

func execError(cluster, what string) error {
	return &KubeconfigError{Cluster: cluster, Exec: true,
		Reason: "kubeconfig uses " + what + "; start regatta with --allow-kubeconfig-exec to allow it"}
}

// loadKubeconfig parses kubeconfig bytes and checks them. Parse errors do
// not quote the input.
func loadKubeconfig(cluster string, data []byte, allowExec bool) error {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return &KubeconfigError{Cluster: cluster, Reason: "kubeconfig cannot be parsed", Err: err}
	}
	if allowExec {
		return nil
	}
	return checkKubeconfig(cluster, cfg)
}
