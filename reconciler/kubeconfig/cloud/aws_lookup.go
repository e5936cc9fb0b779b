package cloud

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/regatta-dev/regatta/spec"
)

// emptySHA256 is the payload hash of a request without body.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// eksCluster is what regatta reads of an EKS DescribeCluster answer.
type eksCluster struct {
	Cluster struct {
		Endpoint             string `json:"endpoint"`
		CertificateAuthority struct {
			Data string `json:"data"`
		} `json:"certificateAuthority"`
	} `json:"cluster"`
}

// lookup calls EKS DescribeCluster, signed (SigV4, service eks) with the
// role's credentials.
func (f *awsFetcher) lookup(ctx context.Context) (Endpoint, error) {
	cfg, err := f.config(ctx)
	if err != nil {
		return Endpoint{}, err
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return Endpoint{}, f.identityError(err)
	}
	lookupErr := func(err error) error {
		return &LookupError{Provider: spec.ProviderAWS, Cluster: f.cluster, Call: "eks:DescribeCluster", Target: f.clusterID, Err: err,
			Fix: "grant eks:DescribeCluster on the cluster to the pod's role, or give server and certificateAuthorityData"}
	}
	req, err := newRequest(ctx, http.MethodGet, eksEndpoint(ctx, cfg)+"/clusters/"+url.PathEscape(f.clusterID))
	if err != nil {
		return Endpoint{}, lookupErr(err)
	}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, emptySHA256, "eks", cfg.Region, time.Now()); err != nil {
		return Endpoint{}, lookupErr(err)
	}
	var out eksCluster
	if err := call(cfg.HTTPClient, req, &out, awsAPIError); err != nil {
		return Endpoint{}, lookupErr(err)
	}
	ca, err := base64.StdEncoding.DecodeString(out.Cluster.CertificateAuthority.Data)
	if err != nil {
		return Endpoint{}, lookupErr(err)
	}
	ep, err := endpointOf(out.Cluster.Endpoint, ca)
	if err != nil {
		return Endpoint{}, lookupErr(err)
	}
	return ep, nil
}

// baseEndpoints are the SDK's configuration sources that name a service's
// endpoint (AWS_ENDPOINT_URL_<SERVICE>, the shared config's services).
type baseEndpoints interface {
	GetServiceBaseEndpoint(ctx context.Context, sdkID string) (string, bool, error)
}

// eksEndpoint is the EKS API's base URL: the SDK's configured one
// (AWS_ENDPOINT_URL_EKS, AWS_ENDPOINT_URL, the config file), else the
// region's.
func eksEndpoint(ctx context.Context, cfg *aws.Config) string {
	for _, src := range cfg.ConfigSources {
		if b, ok := src.(baseEndpoints); ok {
			if u, found, err := b.GetServiceBaseEndpoint(ctx, "EKS"); err == nil && found {
				return strings.TrimRight(u, "/")
			}
		}
	}
	if cfg.BaseEndpoint != nil {
		return strings.TrimRight(*cfg.BaseEndpoint, "/")
	}
	domain := "amazonaws.com"
	if strings.HasPrefix(cfg.Region, "cn-") {
		domain = "amazonaws.com.cn"
	}
	return "https://eks." + cfg.Region + "." + domain
}

// awsAPIError reads an AWS REST-JSON error: the code in X-Amzn-ErrorType
// (or the body's __type), the message in the body.
func awsAPIError(resp *http.Response, body []byte) *APIError {
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
		Msg     string `json:"Message"`
	}
	_ = json.Unmarshal(body, &e) // not JSON: the body is the message
	code := resp.Header.Get("X-Amzn-ErrorType")
	if code == "" {
		code = e.Type
	}
	code, _, _ = strings.Cut(code, ":")
	if i := strings.LastIndex(code, "#"); i >= 0 {
		code = code[i+1:]
	}
	return &APIError{Status: resp.StatusCode, Code: code, Message: firstOf(e.Message, e.Msg, string(body))}
}
