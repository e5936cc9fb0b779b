package apply

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

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
