package testenv

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig returns an admin kubeconfig (YAML) for the cluster: its CA data
// embedded and the admin token, which is in group system:masters. Its
// context, cluster and user are all named after the cluster.
func (c *Cluster) Kubeconfig() []byte { return c.kubeconfig(c.URL()) }

func (c *Cluster) kubeconfig(url string) []byte {
	return c.writeKubeconfig(url, c.files.adminToken, "")
}

// writeKubeconfig is a kubeconfig for url and token trusting the cluster's
// CA, checking the serving certificate for serverName unless it is empty.
func (c *Cluster) writeKubeconfig(url, token, serverName string) []byte {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[c.name] = &clientcmdapi.Cluster{
		Server:                   url,
		CertificateAuthorityData: c.files.caPEM,
		TLSServerName:            serverName,
	}
	cfg.AuthInfos[c.name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[c.name] = &clientcmdapi.Context{Cluster: c.name, AuthInfo: c.name}
	cfg.CurrentContext = c.name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		// Encoding a Config made of strings and bytes cannot fail.
		panic(fmt.Sprintf("testenv: encode kubeconfig of cluster %s: %v", c.name, err))
	}
	return data
}

// RESTConfig returns a new admin client configuration for the cluster, with
// client-go's default rate limits.
func (c *Cluster) RESTConfig() *rest.Config { return c.restConfig(c.URL()) }

func (c *Cluster) restConfig(url string) *rest.Config {
	return &rest.Config{
		Host:            url,
		BearerToken:     c.files.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.files.caPEM},
	}
}

// CAData returns the PEM of the CA that signed the API server's serving
// certificate, for clients built without a kubeconfig.
func (c *Cluster) CAData() []byte { return append([]byte(nil), c.files.caPEM...) }
