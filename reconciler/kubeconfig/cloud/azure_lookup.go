package cloud

import (
	"context"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regatta-dev/regatta/spec"
)

// aksAPIVersion is the managedClusters API version regatta calls.
const aksAPIVersion = "2024-05-01"

// aksCluster is what regatta reads of an AKS managedClusters get answer.
type aksCluster struct {
	Properties struct {
		FQDN        string `json:"fqdn"`
		PrivateFQDN string `json:"privateFQDN"`
	} `json:"properties"`
}

// aksCredentials is a listClusterUserCredential answer: kubeconfigs,
// base64 (JSON decodes them to bytes).
type aksCredentials struct {
	Kubeconfigs []struct {
		Value []byte `json:"value"`
	} `json:"kubeconfigs"`
}

// lookup reads the AKS cluster (its FQDN) and its user kubeconfig, of
// which only the CA is kept, with an ARM token of the pod's identity.
func (f *azureFetcher) lookup(ctx context.Context) (Endpoint, error) {
	arm := strings.TrimRight(f.opts.ARMEndpoint, "/")
	cred, err := f.credential()
	if err != nil {
		return Endpoint{}, err
	}
	at, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{arm + "/.default"}})
	if err != nil {
		return Endpoint{}, f.identityError(err)
	}
	lookupErr := func(action string, err error) error {
		return &LookupError{Provider: spec.ProviderAzure, Cluster: f.cluster, Call: "Microsoft.ContainerService/managedClusters/" + action, Target: f.resource, Err: err,
			Fix: "grant the Azure Kubernetes Service Cluster User Role (managedClusters/read and listClusterUserCredential/action) on the cluster to the managed identity, or give server and certificateAuthorityData"}
	}
	send := func(method, path string, out any) error {
		req, err := newRequest(ctx, method, arm+f.resource+path+"?api-version="+aksAPIVersion)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+at.Token)
		return call(httpClient(f.opts), req, out, errorObject)
	}
	var mc aksCluster
	if err := send(http.MethodGet, "", &mc); err != nil {
		return Endpoint{}, lookupErr("read", err)
	}
	var creds aksCredentials
	if err := send(http.MethodPost, "/listClusterUserCredential", &creds); err != nil {
		return Endpoint{}, lookupErr("listClusterUserCredential/action", err)
	}
	ep, err := endpointOf(firstOf(mc.Properties.FQDN, mc.Properties.PrivateFQDN), aksCA(creds))
	if err != nil {
		return Endpoint{}, lookupErr("read", err)
	}
	return ep, nil
}

// aksCA returns the CA of the first kubeconfig's current cluster; the rest
// of the kubeconfig (it may hold credentials) is dropped unread.
func aksCA(creds aksCredentials) []byte {
	if len(creds.Kubeconfigs) == 0 {
		return nil
	}
	kc, err := clientcmd.Load(creds.Kubeconfigs[0].Value)
	if err != nil {
		return nil
	}
	name := ""
	if c := kc.Contexts[kc.CurrentContext]; c != nil {
		name = c.Cluster
	}
	if c := kc.Clusters[name]; c != nil {
		return c.CertificateAuthorityData
	}
	for _, c := range kc.Clusters {
		if len(kc.Clusters) == 1 {
			return c.CertificateAuthorityData
		}
	}
	return nil
}
