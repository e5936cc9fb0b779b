// Package cloud gets short-lived tokens for managed clusters from the
// workload identity of regatta's pod, through the cloud SDKs the SOPS
// library already links: aws (EKS: a presigned STS GetCallerIdentity, as
// aws-iam-authenticator makes it), gcp (GKE: an OAuth2 access token from
// the metadata server) and azure (AKS: an Entra ID token for the AKS server
// application). No exec plugin, no cloud CLI. Errors name the provider,
// the cluster and what is missing, never a token.
package cloud

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/reconciler/kubeconfig/token"
	"github.com/regatta-dev/regatta/spec"
)

// Options configures the fetchers.
type Options struct {
	// HTTPClient reaches the clouds' token services (STS, Entra ID; the
	// GCP metadata server is reached by its own client) and management
	// APIs (EKS, GKE, ARM). Default: each
	// SDK's own, which honours its CA bundle and proxy settings.
	HTTPClient *http.Client
	// AWSTokenLifetime is how long an EKS token is used: EKS accepts a
	// presigned request for 15 minutes. Default: 14m.
	AWSTokenLifetime time.Duration
	// GKEEndpoint and ARMEndpoint are the base URLs of the GKE and Azure
	// Resource Manager APIs that look a cluster's endpoint up. Default:
	// the clouds' own; the ARM token's scope is <ARMEndpoint>/.default.
	// (EKS's is the SDK's: AWS_ENDPOINT_URL_EKS, else
	// https://eks.<region>.amazonaws.com.)
	GKEEndpoint string
	ARMEndpoint string
	// Now is the clock of look-up intervals. Default: time.Now.
	Now func() time.Time
}

// The management APIs' public endpoints.
const (
	DefaultGKEEndpoint = "https://container.googleapis.com"
	DefaultARMEndpoint = "https://management.azure.com"
)

// DefaultAWSTokenLifetime is the lifetime aws-iam-authenticator gives its
// tokens: a minute less than EKS accepts them.
const DefaultAWSTokenLifetime = 14 * time.Minute

func (o Options) withDefaults() Options {
	if o.AWSTokenLifetime <= 0 {
		o.AWSTokenLifetime = DefaultAWSTokenLifetime
	}
	if o.GKEEndpoint == "" {
		o.GKEEndpoint = DefaultGKEEndpoint
	}
	if o.ARMEndpoint == "" {
		o.ARMEndpoint = DefaultARMEndpoint
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// NewFetcher returns the token fetcher of a cloud cluster. Nothing is
// fetched yet.
func NewFetcher(cluster string, c *spec.CloudCredentials, opts Options) (token.Fetcher, error) {
	return newProvider(cluster, c, opts.withDefaults())
}

func newProvider(cluster string, c *spec.CloudCredentials, opts Options) (provider, error) {
	switch c.Provider {
	case spec.ProviderAWS:
		return newAWS(cluster, c, opts)
	case spec.ProviderGCP:
		return &gcpFetcher{cluster: cluster, resource: c.Cluster, opts: opts}, nil
	case spec.ProviderAzure:
		return newAzure(cluster, c, opts), nil
	}
	return nil, &Error{Provider: c.Provider, Cluster: cluster, Missing: "a provider regatta knows (aws, gcp, azure)"}
}

// Error is a failure to get a cluster's token: it names the provider, the
// cluster and what is missing.
type Error struct {
	Provider string
	Cluster  string
	// Missing says what regatta could not find or was refused.
	Missing string
	Err     error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("cluster %s: %s credentials: %s", e.Cluster, e.Provider, e.Missing)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// envSet lists which of the variables are set, as "A, B" ("none of A, B").
func envSet(names ...string) string {
	var set []string
	for _, n := range names {
		if os.Getenv(n) != "" {
			set = append(set, n)
		}
	}
	if len(set) == 0 {
		return "none of " + strings.Join(names, ", ") + " is set"
	}
	return strings.Join(set, ", ") + " set"
}
