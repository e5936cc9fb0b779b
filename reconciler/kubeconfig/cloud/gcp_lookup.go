package cloud

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/regatta-dev/regatta/spec"
)

// gkeCluster is what regatta reads of a GKE clusters.get answer.
type gkeCluster struct {
	Endpoint             string `json:"endpoint"`
	PrivateClusterConfig struct {
		PrivateEndpoint string `json:"privateEndpoint"`
	} `json:"privateClusterConfig"`
	MasterAuth struct {
		ClusterCaCertificate string `json:"clusterCaCertificate"`
	} `json:"masterAuth"`
}

// lookup calls GKE clusters.get with the OAuth2 token of the pod's
// identity: the endpoint (else the private endpoint, for a cluster whose
// answer names only that) and the cluster's CA.
func (f *gcpFetcher) lookup(ctx context.Context) (Endpoint, error) {
	ts, err := f.source(ctx)
	if err != nil {
		return Endpoint{}, err
	}
	tok, err := ts.Token()
	if err != nil {
		return Endpoint{}, f.identityError(err)
	}
	lookupErr := func(err error) error {
		return &LookupError{Provider: spec.ProviderGCP, Cluster: f.cluster, Call: "container.clusters.get", Target: f.resource, Err: err,
			Fix: "grant container.clusters.get (roles/container.clusterViewer) on the project to the Google service account, or give server and certificateAuthorityData"}
	}
	req, err := newRequest(ctx, http.MethodGet, strings.TrimRight(f.opts.GKEEndpoint, "/")+"/v1/"+f.resource)
	if err != nil {
		return Endpoint{}, lookupErr(err)
	}
	tok.SetAuthHeader(req)
	var out gkeCluster
	if err := call(httpClient(f.opts), req, &out, errorObject); err != nil {
		return Endpoint{}, lookupErr(err)
	}
	ca, err := base64.StdEncoding.DecodeString(out.MasterAuth.ClusterCaCertificate)
	if err != nil {
		return Endpoint{}, lookupErr(err)
	}
	ep, err := endpointOf(firstOf(out.Endpoint, out.PrivateClusterConfig.PrivateEndpoint), ca)
	if err != nil {
		return Endpoint{}, lookupErr(err)
	}
	return ep, nil
}

// httpClient is opts.HTTPClient, else Go's default.
func httpClient(opts Options) *http.Client {
	if opts.HTTPClient != nil {
		return opts.HTTPClient
	}
	return http.DefaultClient
}
