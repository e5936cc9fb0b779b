package cloud

import (
	"context"
	"net/url"
	"os"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"golang.org/x/oauth2"

	"github.com/regatta-dev/regatta/spec"
)

// azureFetcher gets Entra ID tokens for the AKS server application with
// Azure Workload Identity: the pod's projected ServiceAccount token is
// exchanged for an access token (federated credential).
type azureFetcher struct {
	cluster  string
	scope    string
	resource string // the AKS cluster's resource ID
	opts     Options

	mu   sync.Mutex
	cred azcore.TokenCredential
}

func newAzure(cluster string, c *spec.CloudCredentials, opts Options) *azureFetcher {
	audience := c.Audience
	if audience == "" {
		audience = spec.AKSServerApplication
	}
	return &azureFetcher{cluster: cluster, scope: audience + "/.default", resource: c.Cluster, opts: opts}
}

// Fetch returns a new access token (MSAL may answer from its cache while
// the token is far from expiry).
func (f *azureFetcher) Fetch(ctx context.Context, _ *oauth2.Token) (*oauth2.Token, error) {
	cred, err := f.credential()
	if err != nil {
		return nil, err
	}
	at, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{f.scope}})
	if err != nil {
		return nil, f.identityError(err)
	}
	return &oauth2.Token{AccessToken: at.Token, Expiry: at.ExpiresOn}, nil
}

func (f *azureFetcher) credential() (azcore.TokenCredential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cred != nil {
		return f.cred, nil
	}
	// Entra ID validates its own clouds' authorities; another authority
	// (a private cloud, AZURE_AUTHORITY_HOST of the pod) is trusted as set.
	opts := &azidentity.WorkloadIdentityCredentialOptions{DisableInstanceDiscovery: !entraCloud(os.Getenv("AZURE_AUTHORITY_HOST"))}
	if f.opts.HTTPClient != nil {
		opts.ClientOptions = azcore.ClientOptions{Transport: f.opts.HTTPClient}
	}
	cred, err := azidentity.NewWorkloadIdentityCredential(opts)
	if err != nil {
		return nil, f.identityError(err)
	}
	f.cred = cred
	return cred, nil
}

func (f *azureFetcher) identityError(err error) error {
	return &Error{Provider: spec.ProviderAzure, Cluster: f.cluster, Err: err,
		Missing: "no usable workload identity for " + f.scope + " (Azure Workload Identity: AZURE_CLIENT_ID, AZURE_TENANT_ID, " +
			"AZURE_FEDERATED_TOKEN_FILE; " + envSet("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE") + ")"}
}

// entraCloud reports whether host (empty: the public cloud) is an
// authority of one of Microsoft's clouds.
func entraCloud(host string) bool {
	u, err := url.Parse(host)
	if host == "" {
		return true
	}
	if err != nil {
		return false
	}
	switch u.Hostname() {
	case "login.microsoftonline.com", "login.microsoftonline.us", "login.chinacloudapi.cn", "login.partner.microsoftonline.cn":
		return true
	}
	return false
}

// Forget drops the credential and its token cache.
func (f *azureFetcher) Forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cred = nil
}
