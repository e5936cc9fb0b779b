package cloud

import (
	"context"
	"sync"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/regatta-dev/regatta/reconciler/kubeconfig/token"
	"github.com/regatta-dev/regatta/spec"
)

// gcpScopes are those gke-gcloud-auth-plugin asks for.
var gcpScopes = []string{"https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/userinfo.email"}

// gcpFetcher gets OAuth2 access tokens from Application Default
// Credentials: on GKE with Workload Identity, the metadata server's token
// of the Kubernetes ServiceAccount's Google service account.
type gcpFetcher struct {
	cluster  string
	resource string // projects/<p>/locations/<l>/clusters/<n>
	opts     Options

	mu sync.Mutex
	ts oauth2.TokenSource
}

// Fetch returns a new access token.
func (f *gcpFetcher) Fetch(ctx context.Context, _ *oauth2.Token) (*oauth2.Token, error) {
	ts, err := f.source(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := ts.Token()
	if err != nil {
		return nil, f.identityError(err)
	}
	return &oauth2.Token{AccessToken: tok.AccessToken, Expiry: tok.Expiry}, nil
}

func (f *gcpFetcher) source(ctx context.Context) (oauth2.TokenSource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ts != nil {
		return f.ts, nil
	}
	creds, err := google.FindDefaultCredentialsWithParams(ctx, google.CredentialsParams{
		Scopes: gcpScopes, EarlyTokenRefresh: token.MaxRenewBefore})
	if err != nil {
		return nil, f.identityError(err)
	}
	f.ts = creds.TokenSource
	return f.ts, nil
}

func (f *gcpFetcher) identityError(err error) error {
	return &Error{Provider: spec.ProviderGCP, Cluster: f.cluster, Err: err,
		Missing: "no usable workload identity (GKE Workload Identity through the metadata server, or " +
			"GOOGLE_APPLICATION_CREDENTIALS; " + envSet("GCE_METADATA_HOST", "GOOGLE_APPLICATION_CREDENTIALS") + ")"}
}

// Forget drops the token source and its cached token.
func (f *gcpFetcher) Forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ts = nil
}
