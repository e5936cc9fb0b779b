package spec

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Cloud providers of spec.kubeconfig.cloud.provider.
const (
	ProviderAWS   = "aws"
	ProviderGCP   = "gcp"
	ProviderAzure = "azure"
)

// AKSServerApplication is the application ID of the AKS server whose Entra
// ID tokens AKS clusters accept (the default of cloud.audience for azure).
const AKSServerApplication = "6dae42f8-4368-4678-94ff-3960e28e3630"

// CloudCredentials reaches a managed cluster (EKS, GKE, AKS) with
// short-lived tokens of the workload identity of regatta's pod. The
// endpoint and CA are given: regatta does not look them up.
type CloudCredentials struct {
	// Provider is aws, gcp or azure.
	Provider string `yaml:"provider"`
	// Server is the API server's https URL.
	Server string `yaml:"server"`
	// CertificateAuthorityData is the API server's CA, base64 PEM as in a
	// kubeconfig.
	CertificateAuthorityData string `yaml:"certificateAuthorityData"`
	// Cluster is, for aws, the EKS cluster's name or ARN: the token names
	// it (x-k8s-aws-id). Unused by gcp and azure.
	Cluster string `yaml:"cluster,omitempty"`
	// Region is, for aws, the STS region; default: the ARN's, else
	// AWS_REGION.
	Region string `yaml:"region,omitempty"`
	// Audience is, for azure, the application whose token is requested;
	// default AKSServerApplication.
	Audience string `yaml:"audience,omitempty"`
}

// TokenRenewal names the ServiceAccount, on the cluster itself, whose token
// the kubeconfig holds. regatta requests fresh bound tokens for it
// (TokenRequest) with the token in use, before that one expires.
type TokenRenewal struct {
	ServiceAccount ServiceAccountRef `yaml:"serviceAccount"`
	// Expiration is the lifetime of each requested token; default 1h, at
	// least 10m (the API server's minimum).
	Expiration string `yaml:"expiration,omitempty"`
}

// ServiceAccountRef names a ServiceAccount.
type ServiceAccountRef struct {
	Namespace string `yaml:"namespace"`
	Name      string `yaml:"name"`
}

// DefaultTokenExpiration is the lifetime of a renewed token when
// renewToken.expiration is unset.
const DefaultTokenExpiration = time.Hour

// minTokenExpiration is the shortest token a TokenRequest may ask for.
const minTokenExpiration = 10 * time.Minute

// TokenExpiration returns renewToken.expiration, defaulted.
func (r *TokenRenewal) TokenExpiration() time.Duration {
	d, err := time.ParseDuration(r.Expiration)
	if err != nil || d <= 0 {
		return DefaultTokenExpiration
	}
	return d
}

// CAData returns the decoded certificateAuthorityData.
func (c *CloudCredentials) CAData() []byte {
	b, _ := base64.StdEncoding.DecodeString(c.CertificateAuthorityData)
	return b
}

func validateCredentials(rep report, k *KubeconfigSource, secretRefSet bool) {
	if k.Cloud != nil {
		if secretRefSet {
			rep.errorf("spec.kubeconfig.cloud", "cloud and secretRef are exclusive: a cluster is reached one way")
		}
		if k.RenewToken != nil {
			rep.errorf("spec.kubeconfig.renewToken", "renews the token of a kubeconfig Secret; a cloud cluster's tokens are renewed anyway")
		}
		validateCloud(rep, k.Cloud)
	}
	if r := k.RenewToken; r != nil {
		checkDNS(rep, "spec.kubeconfig.renewToken.serviceAccount.namespace", r.ServiceAccount.Namespace, validation.IsDNS1123Label)
		checkDNS(rep, "spec.kubeconfig.renewToken.serviceAccount.name", r.ServiceAccount.Name, validation.IsDNS1123Subdomain)
		if d, err := time.ParseDuration(r.Expiration); r.Expiration != "" && (err != nil || d < minTokenExpiration) {
			rep.errorf("spec.kubeconfig.renewToken.expiration", "%q is not a duration of at least 10m such as 1h", r.Expiration)
		}
	}
}

func validateCloud(rep report, c *CloudCredentials) {
	const f = "spec.kubeconfig.cloud."
	checkEnum(rep, f+"provider", c.Provider, ProviderAWS, ProviderGCP, ProviderAzure)
	if u, err := url.Parse(c.Server); err != nil || u.Scheme != "https" || u.Host == "" {
		rep.errorf(f+"server", "%q is not an https URL such as https://ABC.gr7.eu-west-1.eks.amazonaws.com", c.Server)
	}
	if msg := checkCA(c.CertificateAuthorityData); msg != "" {
		rep.errorf(f+"certificateAuthorityData", "%s", msg)
	}
	if c.Provider == ProviderAWS && c.Cluster == "" {
		rep.errorf(f+"cluster", "required for aws: the EKS cluster's name or ARN, which the token names")
	}
	if c.Provider != ProviderAWS && (c.Cluster != "" || c.Region != "") {
		rep.errorf(f+"cluster", "cluster and region are read for aws only")
	}
	if c.Provider != ProviderAzure && c.Audience != "" {
		rep.errorf(f+"audience", "read for azure only")
	}
}

// checkCA returns why data is not base64 PEM certificates, or "".
func checkCA(data string) string {
	if data == "" {
		return "required: the API server's CA, base64 PEM as in a kubeconfig"
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
	if err != nil {
		return "not base64"
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return "not a PEM certificate"
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return fmt.Sprintf("not a valid certificate: %v", err)
	}
	return ""
}
