package cloud

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"golang.org/x/oauth2"

	"github.com/regatta-dev/regatta/spec"
)

// EKS token format, as aws-iam-authenticator makes and verifies it.
const (
	awsTokenPrefix     = "k8s-aws-v1."
	awsClusterIDHeader = "x-k8s-aws-id"
	// awsPresignExpires is the X-Amz-Expires of the presigned request.
	awsPresignExpires = "60"
)

// awsFetcher presigns STS GetCallerIdentity with the pod's AWS identity
// (IRSA web identity, EKS Pod Identity, or any source of the SDK's default
// chain). The SDK caches the role's credentials and renews them.
type awsFetcher struct {
	cluster   string
	clusterID string // the EKS cluster name the token names
	region    string
	opts      Options

	mu  sync.Mutex
	cfg *aws.Config
}

func newAWS(cluster string, c *spec.CloudCredentials, opts Options) (*awsFetcher, error) {
	f := &awsFetcher{cluster: cluster, clusterID: c.Cluster, region: c.Region, opts: opts}
	if a, err := arn.Parse(c.Cluster); err == nil {
		name, ok := strings.CutPrefix(a.Resource, "cluster/")
		if a.Service != "eks" || !ok {
			return nil, &Error{Provider: spec.ProviderAWS, Cluster: cluster,
				Missing: fmt.Sprintf("cluster %q is not an EKS cluster ARN (arn:aws:eks:<region>:<account>:cluster/<name>)", c.Cluster)}
		}
		f.clusterID = name
		if f.region == "" {
			f.region = a.Region
		}
	}
	return f, nil
}

// Fetch presigns a GetCallerIdentity request naming the cluster.
func (f *awsFetcher) Fetch(ctx context.Context, _ *oauth2.Token) (*oauth2.Token, error) {
	cfg, err := f.config(ctx)
	if err != nil {
		return nil, err
	}
	presign := sts.NewPresignClient(sts.NewFromConfig(*cfg))
	req, err := presign.PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(po *sts.PresignOptions) {
		po.ClientOptions = append(po.ClientOptions, func(o *sts.Options) {
			o.APIOptions = append(o.APIOptions,
				smithyhttp.AddHeaderValue(awsClusterIDHeader, f.clusterID),
				smithyhttp.AddHeaderValue("X-Amz-Expires", awsPresignExpires))
		})
	})
	if err != nil {
		return nil, f.identityError(err)
	}
	return &oauth2.Token{
		AccessToken: awsTokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(req.URL)),
		Expiry:      time.Now().Add(f.opts.AWSTokenLifetime),
	}, nil
}

// config loads the SDK's default configuration once: region, credential
// chain, endpoints (AWS_ENDPOINT_URL_STS).
func (f *awsFetcher) config(ctx context.Context) (*aws.Config, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cfg != nil {
		return f.cfg, nil
	}
	var opts []func(*config.LoadOptions) error
	if f.opts.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(f.opts.HTTPClient))
	}
	if f.region != "" {
		opts = append(opts, config.WithRegion(f.region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, &Error{Provider: spec.ProviderAWS, Cluster: f.cluster, Missing: "the SDK configuration cannot be loaded", Err: err}
	}
	if cfg.Region == "" {
		return nil, &Error{Provider: spec.ProviderAWS, Cluster: f.cluster,
			Missing: "no STS region: give the cluster's ARN or spec.kubeconfig.cloud.region, or set AWS_REGION"}
	}
	f.cfg = &cfg
	return f.cfg, nil
}

func (f *awsFetcher) identityError(err error) error {
	return &Error{Provider: spec.ProviderAWS, Cluster: f.cluster, Err: err,
		Missing: "no usable workload identity (IRSA: AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE; EKS Pod Identity: " +
			"AWS_CONTAINER_CREDENTIALS_FULL_URI; " + envSet("AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI") + ")"}
}

// Forget drops the cached role credentials: the next token is signed with
// credentials fetched anew.
func (f *awsFetcher) Forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cfg = nil
}
